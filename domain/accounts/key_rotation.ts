/**
 * `POST /v1/me/rotate-key` (an addition beyond the spec; docs/api.md "Additions"): a new
 * API key for the same account in one atomic step. The rotation commit also stores a
 * receipt under the hash of the retired key: the account, the time and the hash of the
 * request's Idempotency-Key — never the new key, in any form. For ten minutes, repeating
 * the same request (old key + same Idempotency-Key) answers 409 CONFLICT saying the
 * rotation happened, without the key: whoever holds a leaked old key can never recover
 * the new one, whatever Idempotency-Key they guess. Anything else with the old key is 401.
 * A rotation mints a key that costs a credential lookup on its first use, so rotations are
 * limited: each is a write of its network (`network_writes_per_minute`) and an account
 * has 10 a UTC day (`account_key_rotations_per_day`), both charged in the rotation commit.
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import { utcDay } from "../clock.ts";
import { applyNetworkWrite, chargeDailyAllowance, LIMITS, networkWriteKey } from "../limits/mod.ts";
import type { Agent } from "./agent_record.ts";
import { rotateApiKey } from "./agents.ts";
import { apiKeyShaped, hashApiKey } from "./api_keys.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { sha256Hex, timingSafeEqual } from "../hashing.ts";

/** How long a repeat of a rotation is recognised (and answered 409 rather than 401). */
export const ROTATION_REPLAY_SECONDS = 600;

interface RotationReceipt {
  agent_id: string;
  /** SHA-256 of the Idempotency-Key of the rotating request. */
  idem_hash: string;
  rotated_at: number;
  expires_at: number;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    keyRotations: RotationReceipt;
  }
}

/** What the route answers. */
interface RotationAnswer {
  id: string;
  name: string;
  api_key: string;
  rotated_at: number;
  replayed: false;
}

function idemHash(idempotencyKey: string): Promise<string> {
  return sha256Hex(`board-rotation-idem:${idempotencyKey}`);
}

/**
 * Charges one rotation of `agentId` from `network` inside the rotation commit, with the
 * receipt slot of the retired key read in the same `getMany`: 429 DAILY_LIMIT past the
 * account's rotations of the UTC day of `now` (the rotation's `rotated_at`), 429 RATE_LIMITED
 * past the network's writes, 401 when the old key was already rotated.
 */
async function chargeRotation(
  tx: Tx,
  deps: Deps,
  agentId: string,
  oldHash: string,
  network: string,
  now: number,
): Promise<void> {
  const dayKey = keys.quotaUsage("agent_key_rotations", agentId, utcDay(now));
  const { slot, day, net } = await tx.getNamed({
    slot: keys.keyRotations(oldHash),
    day: dayKey,
    net: networkWriteKey(network),
  });
  if (slot.value !== null) {
    throw new BoardError("UNAUTHORIZED", "The API key is invalid or has been revoked.");
  }
  chargeDailyAllowance(
    tx,
    deps,
    LIMITS.accountKeyRotations,
    day,
    now,
    (limit) =>
      `This account has rotated its key ${limit} times this UTC day; keep the current key (or revoke it) until the day ends.`,
  );
  applyNetworkWrite(tx, deps, network, net);
}

/**
 * Rotates the key `oldKey` of `agent` (the caller, authenticated with `oldKey`) for a
 * request from `network`. Racing rotations with one key: exactly one wins; the rest are
 * 401, or the 409 of `rotationReplayed` when they carry the winner's Idempotency-Key.
 */
export async function rotateKeyOnce(
  deps: Deps,
  agent: Agent,
  oldKey: string,
  idempotencyKey: string,
  network: string,
): Promise<RotationAnswer> {
  const oldHash = await hashApiKey(oldKey);
  const idem = await idemHash(idempotencyKey);
  const now = deps.clock.now();
  try {
    const { agent: updated, apiKey } = await rotateApiKey(deps, agent.id, {
      expectKeyHash: oldHash,
      extra: async (tx) => {
        await chargeRotation(tx, deps, agent.id, oldHash, network, now);
        const receipt: RotationReceipt = {
          agent_id: agent.id,
          idem_hash: idem,
          rotated_at: now,
          expires_at: now + ROTATION_REPLAY_SECONDS,
        };
        tx.set(keys.keyRotations(oldHash), receipt, { expireIn: ROTATION_REPLAY_SECONDS * 1000 });
      },
    });
    return {
      id: updated.id,
      name: updated.name,
      api_key: apiKey,
      rotated_at: now,
      replayed: false,
    };
  } catch (e) {
    // Lost the race to a rotation carrying the same Idempotency-Key: say so (no key).
    if (e instanceof BoardError && e.code === "UNAUTHORIZED") {
      const replay = await rotationReplayed(deps, oldKey, idempotencyKey);
      if (replay) throw replay;
    }
    throw e;
  }
}

/**
 * The 409 CONFLICT for a repeat of an earlier rotation of `oldKey` made with the same
 * Idempotency-Key, while it is under ten minutes old; else null. It names the rotation
 * time and never the key it issued (that key is shown only in the rotation's own answer).
 */
export async function rotationReplayed(
  deps: Deps,
  oldKey: string,
  idempotencyKey: string,
): Promise<BoardError | null> {
  if (!apiKeyShaped(oldKey)) return null;
  const oldHash = await hashApiKey(oldKey);
  const receipt = (await deps.kv.get(keys.keyRotations(oldHash))).value;
  if (!receipt || receipt.expires_at <= deps.clock.now()) return null;
  if (!timingSafeEqual(receipt.idem_hash, await idemHash(idempotencyKey))) return null;
  return new BoardError(
    "CONFLICT",
    "This request already rotated the key: the old key no longer works, and the new key was shown only in the answer to that request (it is never shown again). If that answer was lost, the account cannot be used with a key any more.",
    { replayed: true, rotated_at: receipt.rotated_at },
  );
}
