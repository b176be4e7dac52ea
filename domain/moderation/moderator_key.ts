/**
 * The operator's moderator key (docs/pins_rules_moderation.md "Moderator interface"): its
 * minimum length and its difference from BOARD_SECRET, checked at start, and the throttle on
 * wrong keys — at most 10 wrong keys per network per minute (scaled by `BOARD_LIMIT_SCALE`),
 * exact in KV.
 */
import { keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { admitToWindow, type LimitSpec, WINDOW_EXPIRE_MS } from "../limits/mod.ts";
import { timingSafeEqual } from "../hashing.ts";
import { secretValueProblem } from "../accounts/mod.ts";

/** The shortest moderator key the service starts with (characters). */
export const MODERATOR_KEY_MIN_LENGTH = 32;

const MODERATOR_KEY_FAILURES: LimitSpec = {
  name: "network_moderator_key_failures_per_minute",
  base: 10,
  scope: "network",
  window: "60s",
};

/** Why a configured moderator key is refused at start, or null when it is long enough. */
export function moderatorKeyProblem(key: string | undefined): string | null {
  if (key === undefined) return null;
  if (key.length < MODERATOR_KEY_MIN_LENGTH) {
    return `BOARD_MODERATOR_KEY is ${key.length} characters long; it must be at least ` +
      `${MODERATOR_KEY_MIN_LENGTH} (use a long random value, for example the output of ` +
      "`openssl rand -base64 32`), or leave it unset to turn /mod off.";
  }
  return secretValueProblem("BOARD_MODERATOR_KEY", key) ??
    (/^[\x21-\x7e]+$/.test(key)
      ? null
      : "BOARD_MODERATOR_KEY must be printable ASCII without spaces or line breaks: it travels in an Authorization header, where clients trim spaces and refuse other characters.");
}

/** Why a configured moderator key is refused next to `secret` (BOARD_SECRET), or null. */
export function moderatorKeySecretProblem(
  key: string | undefined,
  secret: string | undefined,
): string | null {
  return secret !== undefined && secret === key
    ? "BOARD_MODERATOR_KEY is the same value as BOARD_SECRET: give each its own random value (the moderator key is typed and sent; the secret never leaves the server)."
    : null;
}

/** The 401 of a missing or wrong moderator key. */
export function moderatorUnauthorized(): BoardError {
  return new BoardError(
    "UNAUTHORIZED",
    'The moderator interface needs "Authorization: Bearer <BOARD_MODERATOR_KEY>".',
    { header: "Authorization" },
  );
}

/**
 * Checks a moderator key presented from `network` against the configured `expected` key
 * (compared in constant time). A wrong key takes a slot of the network's wrong-key window
 * in a checked commit, so no burst of parallel guesses gets past the limit, and is 401.
 * The right key spends nothing: one read of the window, refused only while it is full.
 * When the window is full every attempt is 429 RATE_LIMITED with `Retry-After`, the right
 * key too (otherwise the throttle would still answer guesses).
 */
export async function checkModeratorKey(
  deps: Deps,
  network: string,
  token: string,
  expected: string,
): Promise<void> {
  if (timingSafeEqual(token, expected)) return await checkWrongKeyWindow(deps, network);
  await transact(deps.kv, async (tx) => {
    const key = keys.rateWindows("moderator_key_failures", network);
    const next = admitToWindow(deps, MODERATOR_KEY_FAILURES, (await tx.get(key)).value, refusal);
    tx.set(key, next, { expireIn: WINDOW_EXPIRE_MS });
  });
  throw moderatorUnauthorized();
}

const refusal = (limit: number) =>
  `Your network has presented ${limit} wrong moderator keys in the last minute; wait before trying again.`;

/**
 * What the right moderator key costs: one read of the network's wrong-key window, 429
 * RATE_LIMITED while it is full (`checkModeratorKey` compares the key first; an edge that has
 * compared it may run this beside the request's own reads, see routes/moderator_gate.ts).
 */
export async function checkWrongKeyWindow(deps: Deps, network: string): Promise<void> {
  const key = keys.rateWindows("moderator_key_failures", network);
  const window = (await deps.kv.get(key)).value;
  try {
    admitToWindow(deps, MODERATOR_KEY_FAILURES, window, refusal);
  } catch (e) {
    // The operator is locked out by someone else's guesses (or their own typos): say so in
    // the log, where the operator looks when the desk refuses the right key.
    console.warn(
      `The right moderator key was refused from network ${network}: it presented the most wrong keys a network may in a minute. If that was not you, someone on that network is guessing the key${
        deps.config.trustProxy
          ? "."
          : " (behind a reverse proxy, set BOARD_TRUST_PROXY=1 so that each client's own network is counted)."
      }`,
    );
    throw e;
  }
}
