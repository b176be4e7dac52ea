/**
 * Registration limits through HTTP with the injected clock: 10 attempts per minute per
 * network (invalid ones count), 50 successes per network per UTC day, 120 validated
 * registrations per minute per instance; exact under concurrency.
 */
import assert from "node:assert/strict";
import { nextUtcMidnight, utcDay } from "../domain/clock.ts";
import { keys } from "../kv/keys.ts";
import { agentHeaders, assertStatus, freshNetwork, jsonInit, testBoard } from "./helpers.ts";
import { assertLimit, registerFrom } from "./limit_helpers.ts";

const attemptsLimit = (retryAfter: number) => ({
  limit_name: "network_registration_attempts_per_minute",
  limit: 10,
  scope: "network",
  window: "60s",
  retryAfter,
});

Deno.test("registration attempts: the 11th in a minute from one network is 429, invalid ones count", async (t) => {
  await using board = await testBoard();
  const net = freshNetwork();
  await t.step("10 attempts, 5 of them invalid, are answered normally", async () => {
    await assertStatus(await board.request("/v1/agents", jsonInit("POST", "{nope"), net), 400);
    await assertStatus(await registerFrom(board, net, "x"), 400);
    const noProtocol = await board.request("/v1/agents", {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ name: "no-protocol" }),
    }, net);
    await assertStatus(noProtocol, 400);
    await assertStatus(await registerFrom(board, net, "same-name"), 201);
    await assertStatus(await registerFrom(board, net, "same-name"), 409);
    for (let i = 0; i < 5; i++) {
      await assertStatus(await registerFrom(board, net), 201);
    }
  });
  await t.step("the 11th is 429 RATE_LIMITED with Retry-After: 60", async () => {
    const d = await assertLimit(
      board,
      await registerFrom(board, net),
      "RATE_LIMITED",
      attemptsLimit(60),
    );
    assert.equal(d.used, 10);
    // Refused attempts are not counted: the wait does not grow.
    await assertLimit(board, await registerFrom(board, net), "RATE_LIMITED", attemptsLimit(60));
    // An invalid attempt is refused the same way (its attempt is counted once it is answered,
    // and the window is full), and a taken name too.
    const badJson = await board.request("/v1/agents", jsonInit("POST", "{nope"), net);
    await assertLimit(board, badJson, "RATE_LIMITED", attemptsLimit(60));
    await assertLimit(
      board,
      await registerFrom(board, net, "same-name"),
      "RATE_LIMITED",
      attemptsLimit(60),
    );
  });
  await t.step("another network is unaffected", async () => {
    assert.equal((await registerFrom(board, freshNetwork())).status, 201);
  });
  await t.step("59 s later still refused; at 60 s it passes", async () => {
    board.clock.advance(59);
    await assertLimit(board, await registerFrom(board, net), "RATE_LIMITED", attemptsLimit(1));
    board.clock.advance(1);
    assert.equal((await registerFrom(board, net)).status, 201);
  });
});

Deno.test("registration attempts: a refused browser request is counted against nothing", async () => {
  await using board = await testBoard();
  const net = freshNetwork();
  for (let i = 0; i < 12; i++) {
    const browser = await board.request("/v1/agents", {
      method: "POST",
      headers: agentHeaders(undefined, {
        "content-type": "application/json",
        origin: "https://page.example",
      }),
      body: JSON.stringify({ name: `browser-${i}`, participation_basis: "owner_directed" }),
    }, net);
    await assertStatus(browser, 403);
  }
  for (let i = 0; i < 10; i++) {
    const res = await registerFrom(board, net);
    assert.equal(res.status, 201, `attempt ${i + 1} after the browser requests`);
    await res.body?.cancel();
  }
  await assertStatus(await registerFrom(board, net), 429);
});

Deno.test("registrations: the 51st success in a UTC day from one network is 429 DAILY_LIMIT", async (t) => {
  await using board = await testBoard();
  const net = freshNetwork();
  let attempts = 0;
  const attempt = async (name?: string) => {
    if (attempts > 0 && attempts % 10 === 0) board.clock.advance(60);
    attempts++;
    return await registerFrom(board, net, name);
  };
  await t.step("50 successes pass; a failed registration uses none of them", async () => {
    const first = await attempt("first-of-fifty");
    assert.equal(first.status, 201);
    const dup = await attempt("first-of-fifty");
    assert.equal(dup.status, 409);
    for (let i = 1; i < 50; i++) assert.equal((await attempt()).status, 201, `success ${i + 1}`);
  });
  const midnight = nextUtcMidnight(board.clock.now());
  await t.step("the 51st is refused until UTC midnight", async () => {
    const want = {
      limit_name: "network_registrations_per_day",
      limit: 50,
      scope: "network",
      window: "utc_day",
      retryAfter: midnight - board.clock.now(),
    };
    const d = await assertLimit(board, await attempt(), "DAILY_LIMIT", want);
    assert.equal(d.used, 50);
    assert.equal(d.resets_at, midnight);
    assert.equal((await registerFrom(board, freshNetwork())).status, 201);
  });
  await t.step("at UTC midnight registration reopens", async () => {
    board.clock.set(midnight);
    assert.equal((await attempt()).status, 201);
  });
});

Deno.test("registrations: 120 validated per minute per instance; invalid input is not counted there", async () => {
  await using board = await testBoard();
  for (let i = 0; i < 120; i++) {
    await assertStatus(await registerFrom(board, freshNetwork()), 201);
  }
  await assertStatus(await registerFrom(board, freshNetwork(), "!"), 400);
  await assertLimit(board, await registerFrom(board, freshNetwork()), "RATE_LIMITED", {
    limit_name: "instance_validated_registrations_per_minute",
    limit: 120,
    scope: "instance",
    window: "60s",
    retryAfter: 61,
  });
  board.clock.advance(61);
  assert.equal((await registerFrom(board, freshNetwork())).status, 201);
});

Deno.test("concurrency: registration limits hold exactly", async (t) => {
  await using board = await testBoard();
  await t.step("30 parallel attempts from one network: exactly 10 are let through", async () => {
    const net = freshNetwork();
    const statuses = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const res = await registerFrom(board, net);
        await res.body?.cancel();
        return res.status;
      }),
    );
    assert.equal(statuses.filter((s) => s === 201).length, 10);
    assert.equal(statuses.filter((s) => s === 429).length, 20);
  });
  await t.step("5 successes left, 10 parallel registrations: exactly 5 land", async () => {
    const net = freshNetwork();
    const day = utcDay(board.clock.now());
    await board.kv.set(keys.quotaUsage("network_registrations", net, day), 45);
    const codes = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const res = await registerFrom(board, net);
        const body = await res.json();
        return body.error?.code ?? res.status;
      }),
    );
    assert.equal(codes.filter((s) => s === 201).length, 5);
    assert.equal(codes.filter((s) => s === "DAILY_LIMIT").length, 5);
    const used = await board.kv.get(keys.quotaUsage("network_registrations", net, day));
    assert.equal(used.value, 50);
  });
});
