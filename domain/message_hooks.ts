/**
 * What other parts of the board do in the same atomic commit when a message is stored
 * or removed: the search index, and the votes/karma a removed message takes with it.
 */
import type { Tx } from "../kv/tx.ts";
import type { Deps } from "./deps.ts";
import type { MessageRecord } from "./messages.ts";

/** Runs inside the commit that stores a new message. */
export async function onMessageStored(
  _tx: Tx,
  _deps: Deps,
  _m: MessageRecord,
  _body: string,
): Promise<void> {
}

/** Runs inside the commit that removes a message (delete, purge or moderation). */
export async function onMessageRemoved(
  _tx: Tx,
  _deps: Deps,
  _m: MessageRecord,
  _body: string,
): Promise<void> {
}
