/**
 * The search index: postings of named-board messages, maintained inside the very commit
 * that stores or removes the message (called from domain/board/message_hooks.ts).
 *
 * Postings are stored in blocks: `[..., term, first]` holds the sorted seqs, from `first`
 * up to `first + BLOCK_SPAN` (exclusive), of messages holding the term. A new message
 * writes a block of its own per term, `[..., term, seq]` holding `[seq]` (docs/search.md).
 * Blocks of one list never overlap: a block holds seqs below the first of every later
 * block (new messages get seqs above every indexed one; a re-indexed message goes back
 * into a block only where it must). A posting stored before blocks (value `0` at its seq)
 * is a block of one.
 *
 * Per indexed message also: a KvU64 count per term and topic (changed with `sum`, which
 * needs no check), and the list of terms it was indexed under. These hooks add no check to
 * the commit: the publish commit already carries most of the ten a portable atomic allows.
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import type { MessageRecord } from "../board/messages.ts";
import { indexTerms } from "./tokens.ts";

/** What a message was indexed under; stored so removal never depends on re-tokenising. */
export interface IndexedTerms {
  terms: string[];
  topic: string | null;
}

/** How far (in seqs) a posting block reaches from its first seq. */
export const BLOCK_SPAN = 64;

const ONE = 1n;
/** Adding 2^64 - 1 to a KvU64 wraps around: it subtracts one. */
const MINUS_ONE = (1n << 64n) - 1n;

/** True for messages search covers: the named board only (never `b`, never articles). */
function isSearchable(m: MessageRecord): boolean {
  return m.board === "named";
}

/** The terms a message is indexed under: title and body of roots, body of replies. */
export function indexedTermsOf(m: MessageRecord, body: string): IndexedTerms {
  return { terms: indexTerms(m.kind === "root" ? m.title : null, body), topic: m.topic };
}

/** The seqs a stored posting block holds (a posting stored before blocks holds its own). */
export function blockSeqs(key: Deno.KvKey, value: unknown): number[] {
  return Array.isArray(value) ? value as number[] : [key[key.length - 1] as number];
}

/** The posting lists (term prefixes, then the topic's) an entry is indexed in. */
function listsOf(entry: IndexedTerms): Deno.KvKey[] {
  const out: Deno.KvKey[] = entry.terms.map((t) => keys.searchPostingsPrefix(t));
  if (entry.topic !== null) out.push(keys.searchTopicPostingsPrefix(entry.topic));
  return out;
}

/** The count key of each list of `listsOf(entry)`, in the same order. */
function countsOf(entry: IndexedTerms): Deno.KvKey[] {
  const out: Deno.KvKey[] = entry.terms.map((t) => keys.searchTermCounts(t));
  if (entry.topic !== null) out.push(keys.searchTopicCounts(entry.topic));
  return out;
}

/**
 * Stages the postings of a newly stored message (a block of its own per list; sums; no
 * check). Only for a message whose seq is above every seq indexed before.
 */
export function indexMessage(tx: Tx, m: MessageRecord, body: string): void {
  if (!isSearchable(m)) return;
  const entry = indexedTermsOf(m, body);
  for (const list of listsOf(entry)) tx.set([...list, m.seq], [m.seq]);
  for (const count of countsOf(entry)) tx.sum(count, ONE);
  tx.set(keys.searchTermsByMessage(m.seq), entry);
}

/**
 * Stages the postings of a message indexed again (its text changed). A seq goes back into
 * the block before it only when that block holds later seqs: blocks keep their order. Otherwise it gets a block of its own, so the rules
 * thread (published alone, the one message indexed again) never shares a block that a
 * removal under another lock could rewrite at the same moment. Reads the blocks without
 * checks (see `unindexMessage`).
 */
export async function reindexMessage(tx: Tx, m: MessageRecord, body: string): Promise<void> {
  if (!isSearchable(m)) return;
  const entry = indexedTermsOf(m, body);
  const lists = listsOf(entry);
  const blocks = await blocksAt(tx, lists, m.seq);
  lists.forEach((list, i) => {
    const block = blocks[i];
    const seqs = block ? blockSeqs(block.key, block.value) : [];
    if (seqs.includes(m.seq)) return;
    if (block && seqs.some((s) => s > m.seq)) {
      tx.set(block.key, [...seqs, m.seq].sort((a, b) => a - b));
    } else tx.set([...list, m.seq], [m.seq]);
  });
  for (const count of countsOf(entry)) tx.sum(count, ONE);
  tx.set(keys.searchTermsByMessage(m.seq), entry);
}

/**
 * Stages the removal of a message's postings. Reads the stored term list with `peek` and
 * the blocks with plain reads (no checks): the term list is written once with the message
 * and only removed here, in the commit that also removes the message summary the caller
 * has checked. Two instances removing messages of one block at the same moment can leave a
 * removed seq in it: search then skips it, as it skips any seq whose message is gone.
 */
export async function unindexMessage(tx: Tx, m: MessageRecord): Promise<void> {
  if (!isSearchable(m)) return;
  const entry = (await tx.peek<IndexedTerms>(keys.searchTermsByMessage(m.seq))).value;
  if (!entry) return;
  const blocks = await blocksAt(tx, listsOf(entry), m.seq);
  for (const block of blocks) {
    if (!block) continue;
    const seqs = blockSeqs(block.key, block.value);
    if (!seqs.includes(m.seq)) continue;
    const rest = seqs.filter((s) => s !== m.seq);
    if (rest.length) tx.set(block.key, rest);
    else tx.delete(block.key);
  }
  for (const count of countsOf(entry)) tx.sum(count, MINUS_ONE);
  tx.delete(keys.searchTermsByMessage(m.seq));
}

/** Lists read at once when looking blocks up. */
const LOOKUPS_AT_ONCE = 32;

/**
 * For each list, the block that covers `seq` if any: the one with the greatest first at or
 * below it, as this transaction has staged it (null when there is none or it was deleted).
 */
async function blocksAt(
  tx: Tx,
  lists: Deno.KvKey[],
  seq: number,
): Promise<({ key: Deno.KvKey; value: unknown } | null)[]> {
  const out: ({ key: Deno.KvKey; value: unknown } | null)[] = [];
  for (let i = 0; i < lists.length; i += LOOKUPS_AT_ONCE) {
    const part = await Promise.all(
      lists.slice(i, i + LOOKUPS_AT_ONCE).map(async (prefix) => {
        const iter = tx.kv.list({ prefix, end: [...prefix, seq + 1] }, { reverse: true, limit: 1 });
        for await (const e of iter) return { key: e.key, value: e.value };
        return null;
      }),
    );
    for (const found of part) {
      const own = found ? tx.own(found.key) : undefined;
      if (!found || (own && own.value === null)) out.push(null);
      else out.push(own ? { key: found.key, value: own.value } : found);
    }
  }
  return out;
}
