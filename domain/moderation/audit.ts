/**
 * The moderator audit trail and the idempotency of moderator writes.
 *
 * Every moderator action is one commit (an official pin, a rules replacement, an article or
 * comment decision, a post or account removal, a clock move) that also stores its finished
 * audit record and its Idempotency-Key claim (`runModActionInOneCommit`): an action never
 * lands without its record, and a retry with the same key answers the first outcome. Work
 * an action leaves for after its answer (a removed thread's replies, a removed account's
 * content) is marked in that commit and resumed from the mark.
 */
import { keys } from "../../kv/keys.ts";
import { listTyped, type TypedListSelector } from "../../kv/read_many.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { refuseCredentialAsKey } from "../accounts/mod.ts";
import type { ActionClaim, ActionReplay } from "../action_replays.ts";
import type { CommitRider, RiderTurn } from "../commit_rider.ts";
import type { Deps } from "../deps.ts";
import { BoardError, type ErrorCode } from "../errors.ts";
import { fingerprint, idempotencyConflict } from "../idempotency.ts";
import type { PageParams } from "../paging.ts";

type ModActionName =
  | "remove_post"
  | "remove_agent"
  | "official_pin"
  | "replace_rules"
  | "article_decision"
  | "comment_decision"
  | "advance_clock";

/** One moderator action as recorded. */
export interface AuditRecord {
  seq: number;
  action: ModActionName;
  target: Record<string, unknown>;
  request: Record<string, unknown>;
  idempotency_key: string;
  started_at: number;
  /** `started`: a record an earlier version wrote before an action of several commits ran. */
  outcome: "started" | "ok" | "error";
  status: number | null;
  result: Record<string, unknown> | null;
  finished_at: number | null;
}

/** The stored state of a moderator Idempotency-Key. */
type ModClaim = ActionClaim;

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    modAudit: AuditRecord;
  }
}

const SCOPE = "moderator";
/** A claim older than this whose action never finished may be taken over by a retry. */
const CLAIM_TAKEOVER_SECONDS = 60;

export interface ModActionSpec {
  action: ModActionName;
  target: Record<string, unknown>;
  request: Record<string, unknown>;
  idempotencyKey: string;
  /**
   * The moderator key's check running beside the action (routes/moderator_gate.ts): the
   * action reads beside it, and writes and records nothing before it resolved; when it
   * rejects, the action ends with that rejection, having written nothing.
   */
  keyChecked?: Promise<void>;
}

interface ModOutcome {
  status: number;
  body: Record<string, unknown>;
  replayed: boolean;
  /** The action's audit record. */
  seq: number;
}

/** An audited action's answer: the outcome's body and `replayed` on a repeat. */
export type AuditedAnswer = Record<string, unknown> & { replayed: boolean };

/** An audited action's answer and the seq of its audit record. */
export interface AuditedOutcome {
  answer: AuditedAnswer;
  auditSeq: number;
}

/**
 * An audited action's outcome as answered: a refusal (recorded, or replayed) is thrown as its
 * BoardError (a replayed refusal carries `replayed: true` in its details).
 */
function outcomeOf(out: ModOutcome): AuditedOutcome {
  if (out.status >= 400) {
    const e = out.body.error as {
      code: ErrorCode;
      message: string;
      details?: Record<string, unknown>;
    };
    throw new BoardError(e.code, e.message, { ...e.details, replayed: out.replayed });
  }
  return { answer: { ...out.body, replayed: out.replayed }, auditSeq: out.seq };
}

/**
 * Stages an action's finished audit record and its claim holding `done` (the answer to
 * replay), and the audit counter when the seq is a new one.
 */
function stageOutcome(
  tx: Tx,
  spec: ModActionSpec,
  claim: { key: ReturnType<typeof keys.actionReplays>; print: string },
  decided: { seq: number; fresh: boolean },
  now: number,
  done: { ok: boolean; status: number; body: Record<string, unknown> },
): void {
  const { ok: _, ...replay } = done;
  tx.set(keys.modAudit(decided.seq), auditRecordOf(spec, decided.seq, now, done));
  tx.set(
    claim.key,
    { fingerprint: claim.print, audit_seq: decided.seq, at: now, done: replay } satisfies ModClaim,
  );
  if (decided.fresh) tx.set(keys.counters("mod_audit"), decided.seq);
}

/**
 * What a stored claim means for a new attempt under its key: the recorded outcome to replay,
 * or the audit seq to use (`fresh`: a new one, counted). A claim with another request's
 * fingerprint is 409; one still running (under a minute old) is 409 CONFLICT.
 */
function decideClaim(
  claimE: Deno.KvEntryMaybe<ActionReplay | ActionClaim>,
  counterE: Deno.KvEntryMaybe<number>,
  print: string,
  now: number,
):
  | { replay: { status: number; body: Record<string, unknown> }; seq: number }
  | { seq: number; fresh: boolean } {
  // Moderator actions store only claims under their scope.
  const claim = claimE.value && "audit_seq" in claimE.value ? claimE.value : null;
  if (claim && claim.fingerprint !== print) throw idempotencyConflict(null);
  if (claim?.done) return { replay: claim.done, seq: claim.audit_seq };
  if (claim && now - claim.at < CLAIM_TAKEOVER_SECONDS) {
    throw new BoardError(
      "CONFLICT",
      "An action with this Idempotency-Key is still running; retry shortly.",
      { header: "Idempotency-Key" },
      CLAIM_TAKEOVER_SECONDS - (now - claim.at),
    );
  }
  return claim
    ? { seq: claim.audit_seq, fresh: false }
    : { seq: (counterE.value ?? 0) + 1, fresh: true };
}

/** The audit record of `spec`, finished with `done`. */
function auditRecordOf(
  spec: ModActionSpec,
  seq: number,
  now: number,
  done: { ok: boolean; status: number; body: Record<string, unknown> },
): AuditRecord {
  return {
    seq,
    action: spec.action,
    target: spec.target,
    request: spec.request,
    idempotency_key: spec.idempotencyKey,
    started_at: now,
    outcome: done.ok ? "ok" : "error",
    status: done.status,
    result: done.body,
    finished_at: now,
  };
}

/** An outcome already recorded under the action's Idempotency-Key (thrown out of its commit). */
class RecordedOutcome extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly seq: number,
  ) {
    super("recorded outcome");
  }
}

/** A fingerprint of what an action does, for its Idempotency-Key. */
function actionPrint(spec: ModActionSpec): Promise<string> {
  return fingerprint({ action: spec.action, target: spec.target, request: spec.request });
}

/**
 * Runs a moderator action whose work is one commit, with its audit record and its
 * Idempotency-Key claim in that same commit: `perform` hands the rider it gets to the
 * domain function, which reads the claim and the audit counter in its own read batch and
 * stages the finished record with its answer. A recorded outcome under the key is replayed
 * (`RecordedOutcome`) without writing. A refusal (a BoardError below 500) is recorded, with
 * its audit record, in a commit of its own, then thrown; a 503-class failure records nothing,
 * so a retry runs again. No action runs without its record: both land in one commit.
 */
export async function runModActionInOneCommit(
  deps: Deps,
  spec: ModActionSpec,
  perform: (rider: CommitRider) => Promise<object>,
  bodyOf: (answer: Record<string, unknown>) => Record<string, unknown> = (a) => a,
): Promise<AuditedOutcome> {
  // The key is stored as sent (the claim, the audit record): a credential is refused before
  // anything is read or recorded, whichever edge brought it (the desk's forms carry it as the
  // field `idempotency_key`; `/mod` refuses it as its header first, routes/guards.ts).
  refuseCredentialAsKey(deps.config, spec.idempotencyKey, { field: "idempotency_key" });
  return outcomeOf(await runInOneCommit(deps, spec, perform, bodyOf));
}

/** `runModActionInOneCommit`'s outcome, before a refusal is thrown. */
async function runInOneCommit(
  deps: Deps,
  spec: ModActionSpec,
  perform: (rider: CommitRider) => Promise<object>,
  bodyOf: (answer: Record<string, unknown>) => Record<string, unknown>,
): Promise<ModOutcome> {
  const print = await actionPrint(spec);
  const claimKey = keys.actionReplays(SCOPE, spec.idempotencyKey);
  let seq = 0;
  /** The claim and counter as the action's last attempt read them, for its refusal's record. */
  let read: AuditKeysRead | undefined;
  const rider: CommitRider = {
    async read(tx): Promise<RiderTurn> {
      const [{ claim, counter }] = await Promise.all([
        tx.getNamed({ claim: claimKey, counter: keys.counters("mod_audit") }),
        spec.keyChecked,
      ]);
      read = [claim, counter];
      const now = deps.clock.now();
      const decided = decideClaim(claim, counter, print, now);
      if ("replay" in decided) {
        throw new RecordedOutcome(decided.replay.status, decided.replay.body, decided.seq);
      }
      seq = decided.seq;
      return {
        finish(tx, answer) {
          const done = { ok: true, status: 200, body: bodyOf(answer) };
          stageOutcome(tx, spec, { key: claimKey, print }, decided, now, done);
        },
      };
    },
  };
  try {
    const body = bodyOf({ ...(await perform(rider)) });
    return { status: 200, body, replayed: false, seq };
  } catch (err) {
    if (err instanceof RecordedOutcome) {
      return { status: err.status, body: err.body, replayed: true, seq: err.seq };
    }
    // A refusal before the key was checked is recorded only once it passed.
    await spec.keyChecked;
    if (!(err instanceof BoardError) || err.status >= 500) throw err;
    const earlier = await recordRefusal(deps, spec, print, claimKey, err, read);
    if (earlier) return earlier;
    throw err;
  }
}

/** The Idempotency-Key claim and the audit counter, as an action's batch read them. */
type AuditKeysRead = Deno.KvEntryMaybe<unknown>[];

/**
 * Records a refused one-commit action under its key: the audit record (outcome "error") and
 * the claim holding the refusal, so a retry answers it (null). If the key was meanwhile
 * used, its recorded outcome is answered instead. The claim and counter the action read
 * (`read`) serve its first attempt, whose commit checks them: the record costs the commit
 * alone, and a key or counter changed since runs it again on fresh reads.
 */
async function recordRefusal(
  deps: Deps,
  spec: ModActionSpec,
  print: string,
  claimKey: ReturnType<typeof keys.actionReplays>,
  error: BoardError,
  read?: AuditKeysRead,
): Promise<ModOutcome | null> {
  let earlier = read;
  const { value } = await transact(deps.kv, async (tx) => {
    for (const entry of earlier ?? []) tx.seen(entry);
    earlier = undefined; // a retry reads afresh
    const { claim, counter } = await tx.getNamed({
      claim: claimKey,
      counter: keys.counters("mod_audit"),
    });
    const now = deps.clock.now();
    const decided = decideClaim(claim, counter, print, now);
    if ("replay" in decided) return { ...decided.replay, replayed: true, seq: decided.seq };
    stageOutcome(tx, spec, { key: claimKey, print }, decided, now, {
      ok: false,
      status: error.status,
      body: { error: { code: error.code, message: error.message, details: error.details } },
    });
    return null;
  });
  return value;
}

/** GET /mod/audit: every moderator action, newest first; `before` is an audit seq. */
export async function listAudit(deps: Deps, q: PageParams) {
  const prefix = keys.modAudit.range();
  const selector: TypedListSelector<typeof prefix> = q.before !== undefined
    ? { prefix, end: keys.modAudit(q.before) }
    : { prefix };
  const raw: AuditRecord[] = [];
  for await (
    const e of listTyped(deps.kv, selector, { reverse: true, limit: q.limit + 1 })
  ) {
    raw.push(e.value);
  }
  const page = raw.slice(0, q.limit);
  return {
    items: page,
    next_before: raw.length > q.limit ? page[page.length - 1].seq : null,
  };
}

/** One audit record by its seq, or null. */
export async function auditRecord(deps: Deps, seq: number): Promise<AuditRecord | null> {
  return (await deps.kv.get(keys.modAudit(seq))).value;
}
