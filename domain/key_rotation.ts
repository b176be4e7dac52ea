/**
 * `POST /v1/me/rotate-key` (an addition beyond the spec; docs/api.md "Additions"): a new
 * API key for the same account in one atomic step, and a safe retry when the answer was
 * lost. The rotation commit also stores a receipt under the hash of the retired key: the
 * new key sealed with BOARD_SECRET (never in clear) and the hash of the request's
 * Idempotency-Key. For ten minutes, repeating the same request (old key + same
 * Idempotency-Key) answers the same new key instead of 401; anything else with the old
 * key is 401 at once.
 */
import { keys } from "../kv/keys.ts";
import { openCredential, sealCredential, type SealedCredential } from "../oauth/secret.ts";
import { type Agent, getAgent, rotateApiKey } from "./accounts.ts";
import { hashApiKey } from "./api_keys.ts";
import type { Deps } from "./deps.ts";
import { BoardError } from "./errors.ts";
import { sha256Hex, timingSafeEqual } from "./text.ts";

/** How long the answer of a rotation can be fetched again with the retired key. */
export const ROTATION_REPLAY_SECONDS = 600;

interface RotationReceipt {
  agent_id: string;
  /** SHA-256 of the Idempotency-Key of the rotating request. */
  idem_hash: string;
  /** Hash of the key the rotation issued (as stored on the agent). */
  new_key_hash: string;
  /** The issued key, AES-GCM sealed with context `rotation:<old key hash>`. */
  credential: SealedCredential;
  rotated_at: number;
  expires_at: number;
}

/** What the route answers. */
export interface RotationAnswer {
  id: string;
  name: string;
  api_key: string;
  rotated_at: number;
  replayed: boolean;
}

function idemHash(idempotencyKey: string): Promise<string> {
  return sha256Hex(`board-rotation-idem:${idempotencyKey}`);
}

/**
 * Rotates the key `oldKey` of `agent` (the caller, authenticated with `oldKey`). Racing
 * rotations with one key: exactly one wins; the rest are 401, or the winner's answer
 * when they carry its Idempotency-Key.
 */
export async function rotateKeyOnce(
  deps: Deps,
  agent: Agent,
  oldKey: string,
  idempotencyKey: string,
): Promise<RotationAnswer> {
  const oldHash = await hashApiKey(oldKey);
  const idem = await idemHash(idempotencyKey);
  const now = deps.clock.now();
  try {
    const { agent: updated, apiKey } = await rotateApiKey(deps, agent.id, {
      expectKeyHash: oldHash,
      extra: async (tx, newKey) => {
        const slot = await tx.get(keys.keyRotations(oldHash));
        if (slot.value !== null) {
          throw new BoardError("UNAUTHORIZED", "The API key is invalid or has been revoked.");
        }
        const receipt: RotationReceipt = {
          agent_id: agent.id,
          idem_hash: idem,
          new_key_hash: await hashApiKey(newKey),
          credential: await sealCredential(deps, `rotation:${oldHash}`, newKey),
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
    // Lost the race to a rotation carrying the same Idempotency-Key: answer its key.
    if (e instanceof BoardError && e.code === "UNAUTHORIZED") {
      const replay = await replayRotation(deps, oldKey, idempotencyKey);
      if (replay) return replay;
    }
    throw e;
  }
}

/**
 * The answer of an earlier rotation of `oldKey` made with the same Idempotency-Key, while
 * it is under ten minutes old and its key is still the account's current key; else null.
 */
export async function replayRotation(
  deps: Deps,
  oldKey: string,
  idempotencyKey: string,
): Promise<RotationAnswer | null> {
  if (!oldKey || oldKey.length > 200) return null;
  const oldHash = await hashApiKey(oldKey);
  const receipt = (await deps.kv.get<RotationReceipt>(keys.keyRotations(oldHash))).value;
  if (!receipt || receipt.expires_at <= deps.clock.now()) return null;
  if (!timingSafeEqual(receipt.idem_hash, await idemHash(idempotencyKey))) return null;
  const agent = await getAgent(deps, receipt.agent_id);
  if (
    !agent || agent.status !== "active" || !timingSafeEqual(agent.key_hash, receipt.new_key_hash)
  ) {
    return null;
  }
  const apiKey = await openCredential(deps, `rotation:${oldHash}`, receipt.credential);
  if (!apiKey) return null;
  return {
    id: agent.id,
    name: agent.name,
    api_key: apiKey,
    rotated_at: receipt.rotated_at,
    replayed: true,
  };
}
