import assert from "node:assert/strict";
import {
  API_KEY_PATTERN,
  boardSecret,
  type GrantRecord,
  OAUTH_TOKEN_PATTERN,
  openCredential,
  sealCredential,
} from "../domain/accounts/mod.ts";
import { ManualClock } from "../domain/clock.ts";
import { loadConfig, testConfig } from "../routes/config.ts";
import { makeDeps } from "../domain/deps.ts";
import { keys } from "../kv/keys.ts";
import { register, testBoard } from "./helpers.ts";
import {
  authorizePath,
  connect,
  openConsent,
  pkce,
  refresh,
  registerClient,
  whoami,
} from "./oauth_helpers.ts";

function serialize(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (typeof v === "bigint") return v.toString();
    if (v instanceof Uint8Array) return new TextDecoder().decode(v);
    if (v instanceof Deno.KvU64) return v.value.toString();
    return v;
  });
}

Deno.test("KV holds no API key, access token or refresh token in plain text", async () => {
  await using board = await testBoard();
  const secrets: string[] = [];
  // Link mode with a known key, create mode, a refresh, and a pending consent page.
  const agent = await register(board);
  secrets.push(agent.key);
  const linked = await connect(board, { mode: "link", api_key: agent.key });
  const created = await connect(board);
  for (const t of [linked.tokens, created.tokens]) secrets.push(t.access_token, t.refresh_token);
  const refreshed = await (await refresh(board, linked.clientId, linked.tokens.refresh_token))
    .json();
  secrets.push(refreshed.access_token, refreshed.refresh_token);
  const client = await registerClient(board);
  const page = await openConsent(board, authorizePath(client.client_id, (await pkce()).challenge));
  secrets.push(page.csrf!, page.cookie!.split("=")[1]);

  let entries = 0;
  for await (const entry of board.kv.list({ prefix: [] })) {
    entries++;
    const text = serialize(entry.key) + serialize(entry.value);
    for (const secret of secrets) {
      assert.ok(!text.includes(secret), `plain secret under ${serialize(entry.key)}`);
    }
    assert.ok(!API_KEY_PATTERN.test(text), `API key under ${serialize(entry.key)}`);
    assert.ok(!OAUTH_TOKEN_PATTERN.test(text), `OAuth token under ${serialize(entry.key)}`);
  }
  assert.ok(entries > 20, `scanned ${entries} entries`);
});

Deno.test("the linked credential is sealed with BOARD_SECRET and never returned", async () => {
  await using board = await testBoard();
  const agent = await register(board);
  const { tokens } = await connect(board, { mode: "link", api_key: agent.key });
  const links = [];
  for await (const e of board.kv.list({ prefix: keys.oauthGrantsByAgent.range(agent.id) })) {
    links.push(String(e.key[e.key.length - 1]));
  }
  assert.equal(links.length, 1);
  const grant = (await board.kv.get<GrantRecord>(keys.oauthGrants(links[0]))).value!;
  const sealed = grant.credential;
  assert.equal(sealed.v, 1);
  assert.equal(await openCredential(board.deps, `agent:${agent.id}`, sealed), agent.key);
  // Bound to its agent, and useless under another secret.
  assert.equal(await openCredential(board.deps, "agent:someone-else", sealed), null);
  const otherDeps = {
    ...board.deps,
    config: { ...board.deps.config, secret: "another-secret-entirely" },
  };
  assert.equal(await openCredential(otherDeps, `agent:${agent.id}`, sealed), null);
  // Neither the token response nor whoami carry it.
  const me = await (await whoami(board, tokens.access_token)).text();
  assert.ok(!me.includes(agent.key) && !JSON.stringify(tokens).includes(agent.key));
});

Deno.test("BOARD_SECRET: a development secret is generated once and kept in KV", async () => {
  const kv = await Deno.openKv(":memory:");
  const warn = console.warn;
  const warnings: string[] = [];
  console.warn = (msg: string) => warnings.push(msg);
  try {
    const deps = makeDeps(kv, new ManualClock(), testConfig({ secret: undefined }));
    const first = await boardSecret(deps);
    assert.ok(first.length >= 43);
    assert.equal((await kv.get(keys.metaBoardSecret())).value, first);
    // Another instance on the same KV uses the same secret: ciphertexts stay readable.
    const sealed = await sealCredential(deps, "agent:a", "pb_live_x");
    const second = makeDeps(kv, new ManualClock(), testConfig({ secret: undefined }));
    assert.equal(await boardSecret(second), first);
    assert.equal(await openCredential(second, "agent:a", sealed), "pb_live_x");
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /BOARD_SECRET is not set/);
  } finally {
    console.warn = warn;
    kv.close();
  }
});

Deno.test("BOARD_SECRET is required in production", () => {
  assert.throws(() => loadConfig({ BOARD_ENV: "production" }), /BOARD_SECRET is required/);
  const secret = "s3cret-".repeat(5);
  assert.equal(loadConfig({ BOARD_ENV: "production", BOARD_SECRET: secret }).secret, secret);
});
