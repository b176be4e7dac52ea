import assert from "node:assert/strict";
import { getAgentByName, revokeAgent } from "../domain/accounts.ts";
import { keys } from "../kv/keys.ts";
import { consumeCsrfToken, createConsentAgent } from "../oauth/consent.ts";
import { secretHash } from "../oauth/tokens.ts";
import { jsonInit, type TestBoard, testBoard } from "./helpers.ts";
import {
  agentName,
  authorizePath,
  exchange,
  openConsent,
  pkce,
  registerClient,
  submitConsent,
  whoami,
} from "./oauth_helpers.ts";

/**
 * Simulates a consent POST that consumed its csrf and created the agent, then failed
 * before the authorization request was completed (crash, lost connection, KV error).
 */
async function createThenFail(
  board: TestBoard,
  clientId: string,
  challenge: string,
  name: string,
  cookie?: string | null,
) {
  const page = await openConsent(board, authorizePath(clientId, challenge), cookie);
  const value = page.cookie!.split("=")[1];
  const request = await consumeCsrfToken(
    board.deps,
    page.csrf!,
    await secretHash("consent", value),
  );
  assert.ok(request);
  const { agent } = await createConsentAgent(board.deps, request, {
    name,
    participation_basis: "owner_directed",
  }, "127.0.0.1");
  return { agent, cookie: page.cookie };
}

async function agentCount(board: TestBoard): Promise<number> {
  return (await board.kv.get<number>(keys.counters("agents"))).value ?? 0;
}

async function submitCreate(
  board: TestBoard,
  clientId: string,
  challenge: string,
  name: string,
  cookie: string | null,
) {
  const page = await openConsent(board, authorizePath(clientId, challenge), cookie);
  assert.equal(page.res.status, 200);
  return await submitConsent(board, {
    mode: "create",
    name,
    participation_basis: "owner_directed",
    csrf: page.csrf!,
  }, page.cookie);
}

Deno.test("create succeeded but linking failed: a retry within ten minutes reuses the account", async (t) => {
  await using board = await testBoard();
  const client = await registerClient(board);
  const { verifier, challenge } = await pkce();

  await t.step("same session, same name and client: the account is reused", async () => {
    const name = agentName();
    const { agent, cookie } = await createThenFail(board, client.client_id, challenge, name);
    const before = await agentCount(board);
    board.clock.advance(9 * 60);
    const res = await submitCreate(board, client.client_id, challenge, name, cookie);
    assert.equal(res.status, 303, await res.clone().text());
    assert.equal(await agentCount(board), before, "no second account");
    const code = new URL(res.headers.get("location")!).searchParams.get("code")!;
    const tokens = await exchange(board, client.client_id, code, verifier);
    const me = await (await whoami(board, tokens.access_token)).json();
    assert.equal(me.agent_id, agent.id);
  });

  await t.step("another browser session gets name taken", async () => {
    const name = agentName();
    await createThenFail(board, client.client_id, challenge, name);
    const res = await submitCreate(board, client.client_id, challenge, name, null);
    assert.equal(res.status, 409);
    await res.body?.cancel();
  });

  await t.step("after ten minutes the name is simply taken", async () => {
    const name = agentName();
    const { cookie } = await createThenFail(board, client.client_id, challenge, name);
    board.clock.advance(10 * 60);
    const res = await submitCreate(board, client.client_id, challenge, name, cookie);
    assert.equal(res.status, 409);
    await res.body?.cancel();
  });

  await t.step("another client in the same session does not get the account", async () => {
    const name = agentName();
    const { cookie } = await createThenFail(board, client.client_id, challenge, name);
    const other = await registerClient(board);
    const res = await submitCreate(board, other.client_id, challenge, name, cookie);
    assert.equal(res.status, 409);
    await res.body?.cancel();
  });

  await t.step("a reused account whose key was revoked meanwhile is not reused", async () => {
    const name = agentName();
    const { agent, cookie } = await createThenFail(board, client.client_id, challenge, name);
    await revokeAgent(board.deps, agent.id);
    const res = await submitCreate(board, client.client_id, challenge, name, cookie);
    assert.equal(res.status, 409);
    await res.body?.cancel();
    assert.equal((await getAgentByName(board.deps, name))?.status, "revoked");
  });
});

Deno.test("consent account creation counts toward the network's registration allowance", async () => {
  // Scale 0.02: one registration per network per UTC day.
  await using board = await testBoard({ limitScale: 0.02 });
  const client = await registerClient(board);
  const { challenge } = await pkce();
  const first = await board.request(
    "/v1/agents",
    jsonInit("POST", { name: agentName(), participation_basis: "owner_directed" }),
  );
  assert.equal(first.status, 201);
  await first.body?.cancel();
  const res = await submitCreate(board, client.client_id, challenge, agentName(), null);
  assert.equal(res.status, 429);
  assert.ok(Number(res.headers.get("retry-after")) >= 1);
  assert.match(await res.text(), /registered 1 agents this UTC day/);
});
