/**
 * The moderator audit trail and the idempotency of moderator writes.
 *
 * Every moderator action is claimed before it runs: one commit stores an audit record
 * (`outcome: "started"`) and marks the Idempotency-Key as in progress. When the action
 * ends, one commit stores its outcome in both. So an action never runs without an audit
 * record, a retry with the same key answers the first outcome, and a retry of an action
 * cut short by a crash runs it again (the claim is taken over after a minute).
 */
import { keys } from "../../kv/keys.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import type { ActionClaim } from "../action_replays.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
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
}

/**
 * A write an action hands to the commit that records its success (blind writes only: that
 * commit reads nothing), such as clearing a mark the action left for a crash.
 */
export type SuccessStage = (tx: Tx) => void;

/** How an action hands a `SuccessStage` to the commit that records its success. */
export type OnSuccess = (stage: SuccessStage) => void;

interface ModOutcome {
  status: number;
  body: Record<string, unknown>;
  replayed: boolean;
  /** The action's audit record. */
  seq: number;
}

/**
 * Runs a moderator action under its Idempotency-Key with an audit record. `run` returns
 * the response body of success; a BoardError it throws is the recorded (and replayed)
 * outcome, except 503-class errors, which release the key so a retry runs again.
 */
export async function runModAction(
  deps: Deps,
  spec: ModActionSpec,
  run: (onSuccess: OnSuccess) => Promise<Record<string, unknown>>,
): Promise<ModOutcome> {
  const print = await fingerprint({
    action: spec.action,
    target: spec.target,
    request: spec.request,
  });
  const claimKey = keys.actionReplays(SCOPE, spec.idempotencyKey);
  const { value: claimed } = await transact(deps.kv, async (tx) => {
    const [claimE, counterE] = await tx.getMany([claimKey, keys.counters("mod_audit")]);
    const now = deps.clock.now();
    // Moderator actions store only claims under their scope.
    const claim = claimE.value && "audit_seq" in claimE.value ? claimE.value : null;
    if (claim && claim.fingerprint !== print) {
      throw idempotencyConflict(null);
    }
    if (claim?.done) return { replay: claim.done, seq: claim.audit_seq };
    if (claim && now - claim.at < CLAIM_TAKEOVER_SECONDS) {
      throw new BoardError(
        "CONFLICT",
        "An action with this Idempotency-Key is still running; retry shortly.",
        { header: "Idempotency-Key" },
        CLAIM_TAKEOVER_SECONDS - (now - claim.at),
      );
    }
    const seq = claim?.audit_seq ?? (counterE.value ?? 0) + 1;
    const record: AuditRecord = {
      seq,
      action: spec.action,
      target: spec.target,
      request: spec.request,
      idempotency_key: spec.idempotencyKey,
      started_at: now,
      outcome: "started",
      status: null,
      result: null,
      finished_at: null,
    };
    const next: ModClaim = { fingerprint: print, audit_seq: seq, at: now, done: null };
    tx.set(claimKey, next).set(keys.modAudit(seq), record);
    if (!claim) tx.set(keys.counters("mod_audit"), seq);
    return { replay: null, seq, record };
  });
  if (claimed.replay !== null) return { ...claimed.replay, replayed: true, seq: claimed.seq };
  const started = claimed.record;

  const status = 200;
  const staged: SuccessStage[] = [];
  let body: Record<string, unknown>;
  try {
    body = await run((stage) => void staged.push(stage));
  } catch (err) {
    const retryable = !(err instanceof BoardError) || err.status >= 500;
    await finish(deps, claimKey, started, print, retryable ? null : err, null, retryable);
    throw err;
  }
  await finish(deps, claimKey, started, print, null, { status, body }, false, staged);
  return { status, body, replayed: false, seq: claimed.seq };
}

/**
 * Stores an action's outcome in its audit record (`started`, as the claim stored it) and its
 * claim, in one commit that reads nothing: the claim's commit wrote both, and only a retry
 * taking the claim over (after a minute) writes them again, with the same record.
 */
async function finish(
  deps: Deps,
  claimKey: Deno.KvKey,
  started: AuditRecord,
  print: string,
  error: BoardError | null,
  ok: { status: number; body: Record<string, unknown> } | null,
  release: boolean,
  onSuccess: SuccessStage[] = [],
): Promise<void> {
  const seq = started.seq;
  await transact(deps.kv, (tx) => {
    const now = deps.clock.now();
    const done = ok ??
      (error
        ? {
          status: error.status,
          body: { error: { code: error.code, message: error.message, details: error.details } },
        }
        : { status: 503, body: { error: { code: "UNAVAILABLE", message: "The action failed." } } });
    tx.set(keys.modAudit(seq), {
      ...started,
      outcome: ok ? "ok" : "error",
      status: done.status,
      result: done.body,
      finished_at: now,
    });
    if (ok) { for (const stage of onSuccess) stage(tx); }
    if (release) tx.delete(claimKey);
    else {
      const claim: ModClaim = { fingerprint: print, audit_seq: seq, at: now, done };
      tx.set(claimKey, claim);
    }
    return Promise.resolve();
  });
}

/** GET /mod/audit: every moderator action, newest first; `before` is an audit seq. */
export async function listAudit(deps: Deps, q: PageParams) {
  const prefix = keys.modAudit.range();
  const selector: Deno.KvListSelector = q.before !== undefined
    ? { prefix, end: keys.modAudit(q.before) }
    : { prefix };
  const raw: AuditRecord[] = [];
  for await (
    const e of deps.kv.list<AuditRecord>(selector, { reverse: true, limit: q.limit + 1 })
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
