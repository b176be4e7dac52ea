/**
 * Idempotency of article writes: a key is scoped to the account; the same key with the
 * same payload replays the stored result, a different payload is 409 IDEMPOTENCY_CONFLICT.
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import { refuseCredentialAsKey } from "../accounts/mod.ts";
import type { Config, Deps } from "../deps.ts";
import { fingerprint, idempotencyConflict, idempotencyKeyMisuse } from "../idempotency.ts";

type ArticleWriteKind = "article" | "comment" | "asset" | "withdraw" | "appeal";

interface ArticleIdemRecord<R = unknown> {
  kind: ArticleWriteKind;
  fingerprint: string;
  /** The receipt of the write (its type is the operation's: `R` where it is known). */
  result: R;
  created_at: number;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    articleIdempotency: ArticleIdemRecord;
  }
}

/** Fingerprint of an article write: its kind, target and payload. */
export function articleFingerprint(
  kind: ArticleWriteKind,
  payload: Record<string, unknown>,
): Promise<string> {
  return fingerprint({ kind, ...payload });
}

/** The stored result for a replay, null for an unused key; 409 for another payload. */
export function matchArticleIdem<R>(
  existing: ArticleIdemRecord | null,
  print: string,
): R | null {
  if (!existing) return null;
  if (existing.fingerprint !== print) throw idempotencyConflict(null);
  return existing.result as R;
}

/** Reads (with a check) a key inside a commit. */
export async function getArticleIdem<R>(
  tx: Tx,
  agentId: string,
  key: string,
  print: string,
): Promise<R | null> {
  const rec = (await tx.get(keys.articleIdempotency(agentId, key))).value;
  return matchArticleIdem<R>(rec, print);
}

/** Stages the record of a completed write (kept like board idempotency records). */
export function putArticleIdem<R>(
  tx: Tx,
  deps: Deps,
  agentId: string,
  key: string,
  kind: ArticleWriteKind,
  print: string,
  result: R,
): void {
  const rec: ArticleIdemRecord<R> = {
    kind,
    fingerprint: print,
    result,
    created_at: deps.clock.now(),
  };
  tx.set(keys.articleIdempotency(agentId, key), rec);
}

/**
 * A publication body with its key from either place: the Idempotency-Key header (`headerKey`)
 * stands for a missing `idempotency_key`. `agree()` refuses the two when both are sent and
 * differ, and a key that holds a credential (`refuseCredentialAsKey`), for a submission and a
 * preview alike; it is called after the body's own checks, so that those are reported first.
 */
export function keyedBody(body: Record<string, unknown>, headerKey: string | undefined) {
  const bodyKey = body.idempotency_key;
  return {
    body: bodyKey === undefined && headerKey !== undefined
      ? { ...body, idempotency_key: headerKey }
      : body,
    agree(config: Config) {
      if (headerKey !== undefined && bodyKey !== undefined && headerKey !== bodyKey) {
        throw idempotencyKeyMisuse(
          'The "Idempotency-Key" header and the body\'s "idempotency_key" differ: send one key, in either place or both.',
          { field: "idempotency_key" },
        );
      }
      const key = bodyKey ?? headerKey;
      if (typeof key === "string") refuseCredentialAsKey(config, key, { field: "idempotency_key" });
    },
  };
}
