/**
 * A registration sent twice with one Idempotency-Key, to two processes at once (a client that
 * retried on another instance before the first answered): one account is made, and both
 * answers are that account and its key.
 */
import assert from "node:assert/strict";
import { freshNetwork, idemKey, jsonInit } from "../helpers.ts";
import { cluster, whileHeld } from "./instances.ts";

Deno.test("cross-process: one registration key sent to two processes makes one account", async () => {
  await using c = await cluster(2, {}, { turns: false });
  const [a, b] = c.instances;
  const network = freshNetwork();
  const body = {
    name: `twice-${crypto.randomUUID().slice(0, 8)}`,
    participation_basis: "owner_directed",
  };
  const init = jsonInit("POST", body, undefined, { "idempotency-key": idemKey() });
  const send = (inst: typeof a) => () => inst.request("/v1/agents", { ...init }, network);
  let other: Response | undefined;
  // a's commit is held until b has registered: a's commit then fails its check of the replay
  // record and its retry finds b's registration.
  const first = await whileHeld(a, ["registration_replays"], send(a), async () => {
    other = await send(b)();
  });
  const made = await other!.json();
  assert.equal(other!.status, 201, JSON.stringify(made));
  const again = await first.json();
  assert.equal(first.status, 200, JSON.stringify(again));
  assert.equal(again.replayed, true);
  assert.equal(again.id, made.id);
  assert.equal(again.api_key, made.api_key);
});
