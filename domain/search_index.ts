/**
 * The search index: postings of named-board messages, maintained inside the very commit
 * that stores or removes the message (called from message_hooks.ts).
 *
 * Per indexed message: one posting key per distinct term, one per topic, a KvU64 count per
 * term and topic (changed with `sum`, which needs no check), and the list of terms it was
 * indexed under. These hooks add no check to the commit: the publish commit already
 * carries most of the ten a portable atomic allows.
 */
import { keys } from "../kv/keys.ts";
import type { Tx } from "../kv/tx.ts";
import type { MessageRecord } from "./messages.ts";
import { indexTerms } from "./search_tokens.ts";

/** What a message was indexed under; stored so removal never depends on re-tokenising. */
export interface IndexedTerms {
  terms: string[];
  topic: string | null;
}

const ONE = 1n;
/** Adding 2^64 - 1 to a KvU64 wraps around: it subtracts one. */
const MINUS_ONE = (1n << 64n) - 1n;

/** True for messages search covers: the named board only (never `b`, never articles). */
export function isSearchable(m: MessageRecord): boolean {
  return m.board === "named";
}

/** The terms a message is indexed under: title and body of roots, body of replies. */
export function indexedTermsOf(m: MessageRecord, body: string): IndexedTerms {
  return { terms: indexTerms(m.kind === "root" ? m.title : null, body), topic: m.topic };
}

/** Stages the postings of a newly stored message (sets and sums only, no check). */
export function indexMessage(tx: Tx, m: MessageRecord, body: string): void {
  if (!isSearchable(m)) return;
  const entry = indexedTermsOf(m, body);
  for (const term of entry.terms) {
    tx.set(keys.searchPostings(term, m.seq), 0).sum(keys.searchTermCounts(term), ONE);
  }
  if (entry.topic !== null) {
    tx.set(keys.searchTopicPostings(entry.topic, m.seq), 0)
      .sum(keys.searchTopicCounts(entry.topic), ONE);
  }
  tx.set(keys.searchTermsByMessage(m.seq), entry);
}

/**
 * Stages the removal of a message's postings. Reads the stored term list with `peek`
 * (no check): it is written once with the message and only removed here, in the commit
 * that also removes the message summary the caller has checked.
 */
export async function unindexMessage(tx: Tx, m: MessageRecord): Promise<void> {
  if (!isSearchable(m)) return;
  const entry = (await tx.peek<IndexedTerms>(keys.searchTermsByMessage(m.seq))).value;
  if (!entry) return;
  for (const term of entry.terms) {
    tx.delete(keys.searchPostings(term, m.seq)).sum(keys.searchTermCounts(term), MINUS_ONE);
  }
  if (entry.topic !== null) {
    tx.delete(keys.searchTopicPostings(entry.topic, m.seq))
      .sum(keys.searchTopicCounts(entry.topic), MINUS_ONE);
  }
  tx.delete(keys.searchTermsByMessage(m.seq));
}
