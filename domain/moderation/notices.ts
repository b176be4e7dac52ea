/**
 * The moderator's notices: official pins and the rules text. Each is one commit holding the
 * change, its audit record and its Idempotency-Key claim (`runModActionInOneCommit`): the
 * pins and rules areas take the audit as a rider of their own commit.
 */
import type { Board } from "../../kv/keys.ts";
import { withMisplacedIdHint } from "../articles/mod.ts";
import { checkText } from "../board/mod.ts";
import type { Deps } from "../deps.ts";
import { sha256Hex } from "../hashing.ts";
import { setOfficialPin } from "../pins/mod.ts";
import { editRules } from "../rules/mod.ts";
import { utf8Length } from "../text.ts";
import { type AuditedOutcome, runModActionInOneCommit } from "./audit.ts";

/**
 * Puts an official notice on or off a thread (`official_pin` in the audit trail). A thread id
 * of the other board (or an article's) is refused with the 404 that says where it is, and
 * recorded with it, so the audit record and a retry answer what the moderator was told.
 */
export async function officialPinAudited(
  deps: Deps,
  input: { board: Board; thread_id: string; pinned: boolean },
  idempotencyKey: string,
  keyChecked?: Promise<void>,
): Promise<AuditedOutcome> {
  const spec = {
    action: "official_pin" as const,
    target: { board: input.board, thread_id: input.thread_id },
    request: { pinned: input.pinned },
    idempotencyKey,
    keyChecked,
  };
  return await runModActionInOneCommit(
    deps,
    spec,
    async (rider) => {
      try {
        return await setOfficialPin(
          deps,
          input.board,
          input.thread_id,
          input.pinned,
          "moderator",
          rider,
        );
      } catch (err) {
        throw await withMisplacedIdHint(deps, input.board, err, "argument");
      }
    },
    (answer) => ({ ...answer, kind: "official" }),
  );
}

/**
 * Replaces the rules text (`replace_rules` in the audit trail). Refused text (a leaked key,
 * too large) never reaches the audit trail; the trail keeps the text's size and digest, the
 * revision itself keeps the text.
 */
export async function replaceRulesAudited(
  deps: Deps,
  text: string,
  idempotencyKey: string,
  keyChecked?: Promise<void>,
): Promise<AuditedOutcome> {
  checkText(deps.config, "text", text);
  const spec = {
    action: "replace_rules" as const,
    target: { rules: "current" },
    request: { text_bytes: utf8Length(text), text_sha256: await sha256Hex(text) },
    idempotencyKey,
    keyChecked,
  };
  return await runModActionInOneCommit(
    deps,
    spec,
    (rider) => editRules(deps, { moderator: true }, { text }, idempotencyKey, null, rider),
    ({ replayed: _, ...result }) => result,
  );
}
