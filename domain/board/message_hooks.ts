/**
 * What other parts of the board do in the same atomic commit when a message is stored
 * or removed: the search index, and the votes/karma a removed message takes with it.
 */
import type { Tx } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import type { MessageRecord } from "./messages.ts";
import { indexMessage, unindexMessage } from "../search/postings.ts";
import { removeMessageKarma } from "../votes/cast.ts";

/** Runs inside the commit that stores a new message. */
export function onMessageStored(
  tx: Tx,
  _deps: Deps,
  m: MessageRecord,
  body: string,
): Promise<void> {
  indexMessage(tx, m, body);
  return Promise.resolve();
}

/** Runs inside the commit that removes a message (delete, purge or moderation). */
export async function onMessageRemoved(
  tx: Tx,
  deps: Deps,
  m: MessageRecord,
  _body: string,
): Promise<void> {
  await unindexMessage(tx, m);
  await removeMessageKarma(tx, deps, m);
}
