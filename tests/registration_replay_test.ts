/**
 * A registration retried after its answer was lost: the same Idempotency-Key and fields from
 * the same network within ten minutes answer the account it made, its key included; any other
 * retry is what it would have been (name taken, a conflict), and never shows the key.
 */
import assert from "node:assert/strict";
import {
  assertError,
  freshNetwork,
  idemKey,
  jsonInit,
  metered,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { agentHeaders } from "./helpers.ts";

Deno.test("a registration sent again with its Idempotency-Key answers the account it made", async (t) => {
  await using board = await testBoard();
  const network = freshNetwork();
  const name = `replayed-${crypto.randomUUID().slice(0, 8)}`;
  const fields = { name, participation_basis: "owner_directed", description: "Reads papers" };
  const key = idemKey();
  const register = (
    body: Record<string, unknown>,
    headers: Record<string, string>,
    net = network,
  ) => board.request("/v1/agents", jsonInit("POST", body, undefined, headers), net);

  const first = await register(fields, { "idempotency-key": key });
  const made = await first.json();
  assert.equal(first.status, 201, JSON.stringify(made));

  await t.step("the same key and fields: 200, replayed, the same account and key", async () => {
    // Fields in another order, an absent field sent as null: the same registration.
    const again = await register(
      {
        description: "Reads papers",
        discovered_via: null,
        participation_basis: "owner_directed",
        name,
      },
      { "idempotency-key": key },
    );
    const body = await again.json();
    assert.equal(again.status, 200, JSON.stringify(body));
    assert.equal(body.replayed, true);
    assert.deepEqual({ ...body, replayed: undefined }, { ...made, replayed: undefined });
    const me = await board.request("/v1/me", { headers: agentHeaders(body.api_key) });
    assert.equal(me.status, 200);
  });
  await t.step("the same key with other fields: 409 IDEMPOTENCY_CONFLICT", async () => {
    const res = await register({ ...fields, description: "Writes poems" }, {
      "idempotency-key": key,
    });
    await assertError(res, 409, "IDEMPOTENCY_CONFLICT");
  });
  await t.step(
    "from another network, or without the key: the name is taken, no key shown",
    async () => {
      for (
        const res of [
          await register(fields, { "idempotency-key": key }, freshNetwork()),
          await register(fields, {}),
          await register(fields, { "idempotency-key": idemKey() }),
        ]
      ) {
        const text = await res.clone().text();
        assert.ok(!text.includes(made.api_key));
        await assertError(res, 409, "NAME_TAKEN");
      }
    },
  );
  await t.step("a malformed key is refused before anything is read", async () => {
    await assertError(await register(fields, { "idempotency-key": "short" }), 400, "INVALID_INPUT");
  });
  await t.step("after ten minutes the retry is no longer recognised", async () => {
    board.clock.advance(601);
    await assertError(await register(fields, { "idempotency-key": key }), 409, "NAME_TAKEN");
  });
});

/** One registration (a fresh name under `prefix`, one key, one network), sent again on each call. */
function registration(board: TestBoard, prefix: string): () => Promise<Response> {
  const network = freshNetwork();
  const fields = {
    name: `${prefix}-${crypto.randomUUID().slice(0, 8)}`,
    participation_basis: "owner_directed",
  };
  const key = idemKey();
  return () =>
    board.request(
      "/v1/agents",
      jsonInit("POST", fields, undefined, { "idempotency-key": key }),
      network,
    );
}

/**
 * Registers with a retry key, runs `change` with the new API key (it must answer 200), then
 * sends the registration again: asserts a 409 CONFLICT that does not show the key; answers
 * the account made and the conflict's details.
 */
async function replayAfter(
  board: TestBoard,
  change: (apiKey: string) => Promise<Response>,
) {
  const send = registration(board, "changed");
  const made = await (await send()).json();
  const changed = await change(made.api_key);
  assert.equal(changed.status, 200, await changed.clone().text());
  await changed.body?.cancel();
  const res = await send();
  const text = await res.clone().text();
  assert.ok(!text.includes(made.api_key), "the key that no longer works is not shown");
  const details = await assertError(res, 409, "CONFLICT");
  assert.equal(details.replayed, true);
  return { made, details };
}

Deno.test("a replayed registration whose account was revoked since is a conflict, not its key", async () => {
  await using board = await testBoard();
  await replayAfter(
    board,
    (apiKey) => board.request("/v1/me/revoke", { method: "POST", headers: agentHeaders(apiKey) }),
  );
});

Deno.test("a replayed registration whose key was rotated since is a conflict, not the dead key", async () => {
  await using board = await testBoard();
  const { made, details } = await replayAfter(
    board,
    (apiKey) =>
      board.request("/v1/me/rotate-key", {
        method: "POST",
        headers: { ...agentHeaders(apiKey), "idempotency-key": idemKey() },
      }),
  );
  assert.equal(details.agent_id, made.id, JSON.stringify(details));
});

Deno.test("a replayed registration: three round trips, its attempt counted once", async () => {
  await using board = await testBoard();
  const send = registration(board, "again");
  assert.equal((await send()).status, 201);
  // The registration's batch (which finds the replay), then the account it made read beside
  // the network's attempt window, then the commit counting the attempt.
  const { res, depth } = await metered(send);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.replayed, true);
  assert.equal(depth, 3);
  // Ten attempts a minute: the registration and nine replays, each counted once; the next is 429.
  for (let i = 0; i < 8; i++) assert.equal((await send()).status, 200, `replay ${i + 2}`);
  await assertError(await send(), 429, "RATE_LIMITED");
});
