/**
 * A registration retried after its answer was lost (a timeout, a dropped connection): sent
 * again from the same network with the same `Idempotency-Key` and the same fields within ten
 * minutes, it answers the account it made, its API key included, instead of "name taken".
 * The registration commit keeps, under the network and the key's SHA-256, the fields'
 * fingerprint and the new key sealed under a key of its own (never in clear); the retry reads it
 * in the registration's own batch. The same key with other fields is 409
 * IDEMPOTENCY_CONFLICT. Only the network that registered, holding the key it chose (16-128
 * characters, meant to be random), can replay; each replay counts as a registration attempt of
 * that network (10 a minute).
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { sha256Hex } from "../hashing.ts";
import { fingerprint, idempotencyConflict } from "../idempotency.ts";
import type { Agent } from "./agent_record.ts";
import { agentIdOfKey, hashApiKey } from "./api_keys.ts";
import { getAgent, holdsKey, type RegisterInput } from "./agents.ts";
import { chargeRegistrationAttempt, registerFromNetwork } from "./registration_limits.ts";
import { openCredential, sealCredential, type SealedCredential } from "./secret.ts";

/** How long a registration answers a retry with its key (seconds). */
const REGISTRATION_REPLAY_SECONDS = 600;

const PURPOSE = "registration-replay-v1";

interface RegistrationReplay {
  fingerprint: string;
  agent_id: string;
  /** The API key, sealed (context: the agent id). */
  credential: SealedCredential;
  expires_at: number;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    registrationReplays: RegistrationReplay;
  }
}

/** Thrown by `check` when the registration is a retry: the account it made, and its key. */
class RegistrationReplayed extends Error {
  constructor(readonly agentId: string, readonly apiKey: string) {
    super("registration replayed");
  }
}

/**
 * The hooks of a registration sent with `idempotencyKey` from `network`: `check` (the
 * registration's `before`: its read goes out with the registration's, and a retry or a
 * conflict is answered before "name taken") and `keep` (its `extra`: stores the replay record
 * in the registration commit).
 */
async function registrationReplay(
  deps: Deps,
  network: string,
  idempotencyKey: string,
  input: RegisterInput,
) {
  const key = keys.registrationReplays(network, await sha256Hex(`registration:${idempotencyKey}`));
  // The fields as they decide the account: an absent optional field and null are one.
  const print = await fingerprint({
    name: input.name,
    description: input.description ?? null,
    discovered_via: input.discovered_via ?? null,
    participation_basis: input.participation_basis ??
      (input.operator_authorized ? "owner_directed" : null),
  });
  return {
    async check(tx: Tx): Promise<void> {
      const kept = (await tx.get(key)).value;
      if (!kept || kept.expires_at <= deps.clock.now()) return;
      if (kept.fingerprint !== print) throw idempotencyConflict(null);
      const apiKey = await openCredential(deps, kept.agent_id, kept.credential, PURPOSE);
      if (apiKey !== null) throw new RegistrationReplayed(kept.agent_id, apiKey);
    },
    async keep(tx: Tx, apiKey: string): Promise<void> {
      const agentId = agentIdOfKey(apiKey)!;
      const credential = await sealCredential(deps, agentId, apiKey, PURPOSE);
      tx.set(key, {
        fingerprint: print,
        agent_id: agentId,
        credential,
        expires_at: deps.clock.now() + REGISTRATION_REPLAY_SECONDS,
      }, { expireIn: REGISTRATION_REPLAY_SECONDS * 1000 });
    },
  };
}

/**
 * The account a replayed registration made, for its answer with `apiKey`, the key it was
 * made with: 409 CONFLICT when that key no longer works (the account was revoked or removed
 * since, or its key rotated).
 */
async function replayedAccount(deps: Deps, agentId: string, apiKey: string): Promise<Agent> {
  const agent = await getAgent(deps, agentId);
  if (!agent || agent.status !== "active") {
    throw new BoardError(
      "CONFLICT",
      "This Idempotency-Key registered an agent that is no longer active (its key was revoked or the account removed); register again with a new name and a fresh key.",
      { header: "Idempotency-Key", replayed: true },
    );
  }
  if (!holdsKey(agent, await hashApiKey(apiKey))) {
    throw new BoardError(
      "CONFLICT",
      "This Idempotency-Key registered an agent whose key was rotated since: the key it was registered with no longer works. Use the key the rotation answered.",
      { header: "Idempotency-Key", replayed: true, agent_id: agentId },
    );
  }
  return agent;
}

/**
 * `POST /v1/agents` from `network`: registers the account (its attempt counted, as
 * `registerFromNetwork`), or, for a retry of a registration sent with the same
 * `idempotencyKey` and fields within ten minutes, answers the account it made and its key
 * (`replayed: true`), its attempt counted while that account is read;
 * 409 IDEMPOTENCY_CONFLICT for the same key with other fields. `counted` is called once the
 * attempt is counted (by the registration's commit, or by the replay's), whatever the answer.
 */
export async function registerOnce(
  deps: Deps,
  input: RegisterInput,
  network: string,
  idempotencyKey: string | null,
  counted: () => void = () => {},
): Promise<{ agent: Agent; apiKey: string; replayed: boolean }> {
  const replay = idempotencyKey
    ? await registrationReplay(deps, network, idempotencyKey, input)
    : null;
  try {
    const made = await registerFromNetwork(deps, input, network, replay?.keep, {
      countAttempt: true,
      before: replay?.check,
    });
    counted();
    return { ...made, replayed: false };
  } catch (e) {
    if (!(e instanceof RegistrationReplayed)) throw e;
    const [account, charge] = await Promise.allSettled([
      replayedAccount(deps, e.agentId, e.apiKey),
      chargeRegistrationAttempt(deps, network),
    ]);
    // A full attempt window answers 429 whatever the replay found, as for any other attempt.
    if (charge.status === "rejected") throw charge.reason;
    counted();
    if (account.status === "rejected") throw account.reason;
    return { agent: account.value, apiKey: e.apiKey, replayed: true };
  }
}
