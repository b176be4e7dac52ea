/**
 * The moderator key: wrong keys are throttled per network (exactly, even in a parallel
 * burst), the right key never spends the allowance, and short keys are refused at start.
 */
import assert from "node:assert/strict";
import { loadConfig, serviceConfig, testConfig } from "../routes/config.ts";
import { BOARD_SECRET_MIN_LENGTH } from "../domain/accounts/mod.ts";
import { MODERATOR_KEY_MIN_LENGTH } from "../domain/moderation/mod.ts";
import { assertError, testBoard, warnings } from "./helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";

const WRONG = "wrong-moderator-key-0123456789abcdef";

function modAudit(board: Awaited<ReturnType<typeof testBoard>>, key: string, network: string) {
  const headers = { accept: "application/json", authorization: `Bearer ${key}` };
  return board.request("/mod/audit", { headers }, network);
}

Deno.test("/mod: wrong keys are throttled per network with Retry-After", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const attacker = "198.51.100.7";
  for (let i = 0; i < 10; i++) {
    await assertError(await modAudit(board, `${WRONG}-${i}`, attacker), 401, "UNAUTHORIZED");
  }
  const res = await modAudit(board, WRONG, attacker);
  const details = await assertError(res, 429, "RATE_LIMITED");
  assert.equal(details.limit_name, "network_moderator_key_failures_per_minute");
  assert.equal(details.scope, "network");
  assert.equal(details.used, 10, "like every KV limit's 429 (docs/limits.md), it says how many");
  assert.ok(Number(res.headers.get("retry-after")) >= 1);
  assert.equal(Number(res.headers.get("retry-after")), details.retry_after);
  // While the network is throttled even the right key is refused: no answer to a guess. The
  // log tells the operator why the right key was refused.
  const warned = await warnings(() =>
    assertError(modAudit(board, MOD_KEY, attacker), 429, "RATE_LIMITED")
  );
  assert.equal(warned.length, 1);
  assert.match(warned[0], /right moderator key was refused from network 198\.51\.100\.7/);
  // Without proxy trust it suggests turning it on; with it on, it does not.
  assert.match(warned[0], /set BOARD_TRUST_PROXY=1/);
  // Another network is not affected.
  assert.equal((await modAudit(board, MOD_KEY, "203.0.113.9")).status, 200);
  board.clock.advance(61);
  assert.equal((await modAudit(board, MOD_KEY, attacker)).status, 200);
});

Deno.test("/mod: the right key spends nothing; a parallel burst of guesses gets 10 answers", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  for (let i = 0; i < 25; i++) {
    assert.equal((await modRequest(board, "GET", "/mod/audit")).status, 200);
  }
  const burst = await Promise.all(
    Array.from({ length: 30 }, (_, i) => modAudit(board, `${WRONG}-${i}`, "192.0.2.44")),
  );
  const statuses = burst.map((r) => r.status);
  await Promise.all(burst.map((r) => r.body?.cancel()));
  assert.equal(statuses.filter((s) => s === 401).length, 10, statuses.join(","));
  assert.equal(statuses.filter((s) => s === 429).length, 20, statuses.join(","));
});

Deno.test("a moderator key shorter than 32 characters is refused at start", () => {
  const short = "x".repeat(MODERATOR_KEY_MIN_LENGTH - 1);
  assert.throws(
    () => loadConfig({ BOARD_MODERATOR_KEY: short }),
    /BOARD_MODERATOR_KEY is 31 characters long; it must be at least 32/,
  );
  assert.throws(() => testConfig({ moderatorKey: short }), /at least 32/);
  const ok = "0123456789".repeat(4).slice(0, MODERATOR_KEY_MIN_LENGTH);
  assert.equal(loadConfig({ BOARD_MODERATOR_KEY: ok }).moderatorKey, ok);
  assert.equal(loadConfig({}).moderatorKey, undefined);
});

Deno.test("the server needs BOARD_SECRET outside development", () => {
  assert.throws(() => serviceConfig({}, false), /BOARD_SECRET is not set/);
  assert.throws(() => serviceConfig({ BOARD_SECRET: "" }, false), /BOARD_SECRET is not set/);
  const secret = "0123456789".repeat(4);
  assert.equal(serviceConfig({ BOARD_SECRET: secret }, false).secret, secret);
  assert.equal(serviceConfig({}, true).secret, undefined, "deno task dev runs without one");
});

Deno.test("a BOARD_SECRET shorter than 32 characters is refused at start", () => {
  const short = "x".repeat(BOARD_SECRET_MIN_LENGTH - 1);
  for (const env of [{ BOARD_SECRET: "x" }, { BOARD_SECRET: short }]) {
    assert.throws(() => serviceConfig(env, false), /BOARD_SECRET is \d+ characters long/);
    assert.throws(() => serviceConfig(env, true), /it must be at least 32/, "dev too when set");
    assert.throws(
      () => loadConfig({ ...env, BOARD_ENV: "production" }),
      /it must be at least 32/,
    );
  }
  assert.throws(() => testConfig({ secret: short }), /at least 32/);
  const ok = "0123456789".repeat(4).slice(0, BOARD_SECRET_MIN_LENGTH);
  assert.equal(serviceConfig({ BOARD_SECRET: ok }, false).secret, ok);
});

Deno.test("/mod: the lock-out warning does not suggest proxy trust where it is on", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, trustProxy: true });
  const attacker = "198.51.100.8";
  for (let i = 0; i < 10; i++) {
    await (await modAudit(board, `${WRONG}-${i}`, attacker)).body?.cancel();
  }
  const warned = await warnings(() =>
    assertError(modAudit(board, MOD_KEY, attacker), 429, "RATE_LIMITED")
  );
  assert.equal(warned.length, 1);
  assert.doesNotMatch(warned[0], /BOARD_TRUST_PROXY/);
});
