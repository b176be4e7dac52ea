/**
 * What other parts of the board do in the same atomic commit when a message is stored
 * or removed: the body entry with the search terms, and the votes/karma a removed message
 * takes with it; and what follows a stored message's commit (sealing a complete search batch).
 */
import type { Tx } from "../../kv/tx.ts";
import { unmetered } from "../../kv/meter.ts";
import type { Deps } from "../deps.ts";
import type { MessageRecord } from "../board/mod.ts";
import { type Board, keys } from "../../kv/keys.ts";
import {
  type IndexedTerms,
  sealSearchBatches,
  stageBody,
  unindexAllButBlocks,
  unindexMessage,
} from "../search/mod.ts";
import { removeMessageKarma } from "../votes/mod.ts";
import { onKarmaChanged } from "../pins/mod.ts";

/** Runs inside the commit that stores a new message: its body entry, with its search terms and filter. */
export function onMessageStored(tx: Tx, m: MessageRecord, body: string): void {
  stageBody(tx, m, body);
}

/**
 * The keys removing message `seq` of `board` reads besides the message itself, for a
 * planned batch (`Tx.prefetch`): its body entry (its search terms) and the sealed-search
 * marker on the named board, and, when its author is known, the author's voting standing,
 * account and veteran record (the karma a removal takes back, `onKarmaChanged`).
 */
export function removalReadPlan(
  board: Board,
  seq: number,
  authorId: string | null,
): Deno.KvKey[] {
  if (board !== "named") return [];
  return [
    keys.bodies(board, seq),
    keys.searchSealed(),
    ...(authorId
      ? [keys.votingStandings(authorId), keys.agents(authorId), keys.veterans(authorId)]
      : []),
  ];
}

/**
 * Runs inside the commit that removes a message (delete, purge or moderation). With
 * `blocksLater` (a removal that answers before its purge), the message's seq stays in the
 * sealed posting blocks holding it, whose lookups would cost the removal a round trip: the
 * term list of those blocks is answered, for the purge to take the seq out
 * (`retractPostings`); search skips it meanwhile, its summary being gone. Otherwise null.
 */
export async function onMessageRemoved(
  tx: Tx,
  deps: Deps,
  m: MessageRecord,
  blocksLater = false,
): Promise<IndexedTerms | null> {
  let left: IndexedTerms | null = null;
  if (blocksLater) left = await unindexAllButBlocks(tx, m, deps.config.searchBatch);
  else await unindexMessage(tx, m, deps.config.searchBatch);
  await removeMessageKarma(tx, deps, m, onKarmaChanged);
  return left;
}

/**
 * Runs after the commit that stored message `seq`: the message that completes a search
 * batch has it sealed (domain/search/seal.ts) while the next requests are served, unless the
 * configuration says to wait; either way apart from the request (its KV calls are not the
 * request's, kv/meter.ts). A failure loses nothing: the messages are searchable from
 * their term lists, and the next batch's sealing or the tidy-up cron seals it.
 */
export async function afterMessageStored(deps: Deps, board: Board, seq: number): Promise<void> {
  if (board !== "named" || seq % deps.config.searchBatch !== 0) return;
  const sealing = unmetered(() => sealSearchBatches(deps)).catch((err) => {
    console.error("sealing a search batch failed; it will be sealed later", err);
  });
  if (!deps.config.backgroundSealing) await sealing;
}
