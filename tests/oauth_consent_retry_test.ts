import assert from "node:assert/strict";
import { getAgentByName } from "../domain/accounts/mod.ts";
import { revokeAgent } from "../domain/writes/mod.ts";
import { keys } from "../kv/keys.ts";
import { consentFormToken, secretHash, submitCreateForm } from "../domain/accounts/mod.ts";
import { assertStatus, jsonInit, type TestBoard, testBoard } from "./helpers.ts";
import {
  agentName,
  authorizePath,
  exchange,
  newKeyFromPage,
  openConsent,
  pkce,
  registerClient,
  submitConsent,
  submitConsentForm,
  whoami,
} from "./oauth_helpers.ts";

/**
 * Simulates a consent POST that used up its form and created the agent, whose answer (the
 * key page) never reached the person (lost connection); returns the csrf of the form as the
 * page shows it again for the same request.
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
  const created = await submitCreateForm(
    board.deps,
    page.csrf!,
    await secretHash("consent", value),
    { name, participation_basis: "owner_directed" },
    "127.0.0.1",
  );
  assert.ok(created && "created" in created);
  const { request, form } = created.form;
  return {
    agent: created.created.agent,
    request,
    cookie: page.cookie,
    retryCsrf: await consentFormToken(board.deps, request, form + 1),
  };
}

async function agentCount(board: TestBoard): Promise<number> {
  return (await board.kv.get<number>(keys.counters("agents"))).value ?? 0;
}

function createForm(name: string, csrf: string) {
  return { mode: "create", name, participation_basis: "owner_directed", csrf };
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
  return await submitConsent(board, createForm(name, page.csrf!), page.cookie);
}

Deno.test("create succeeded but its key page was lost: a retry of the same request reuses the account", async (t) => {
  await using board = await testBoard();
  const client = await registerClient(board);
  const { verifier, challenge } = await pkce();
  const fail = (name: string) => createThenFail(board, client.client_id, challenge, name);

  await t.step("the form shown again, same name, within ten minutes: reused", async () => {
    const name = agentName();
    const { agent, cookie, retryCsrf } = await fail(name);
    const before = await agentCount(board);
    board.clock.advance(9 * 60);
    const res = await submitConsent(board, createForm(name, retryCsrf), cookie);
    assert.equal(res.status, 303, await res.clone().text());
    assert.equal(await agentCount(board), before, "no second account");
    const code = new URL(res.headers.get("location")!).searchParams.get("code")!;
    const tokens = await exchange(board, client.client_id, code, verifier);
    const me = await (await whoami(board, tokens.access_token)).json();
    assert.equal(me.agent_id, agent.id);
  });

  await t.step(
    "a new authorization request, even in the same browser, gets name taken",
    async () => {
      const name = agentName();
      const { cookie } = await fail(name);
      await assertStatus(await submitCreate(board, client.client_id, challenge, name, cookie), 409);
    },
  );

  await t.step("after ten minutes the name is simply taken", async () => {
    const name = agentName();
    const { cookie, retryCsrf } = await fail(name);
    board.clock.advance(10 * 60);
    await assertStatus(await submitConsent(board, createForm(name, retryCsrf), cookie), 409);
  });

  await t.step("a reused account whose key was revoked meanwhile is not reused", async () => {
    const name = agentName();
    const { agent, cookie, retryCsrf } = await fail(name);
    await revokeAgent(board.deps, agent.id);
    await assertStatus(await submitConsent(board, createForm(name, retryCsrf), cookie), 409);
    assert.equal((await getAgentByName(board.deps, name))?.status, "revoked");
  });
});

Deno.test("a create form sent twice (a double click) shows the new key again, not an expired form", async (t) => {
  await using board = await testBoard();
  const client = await registerClient(board);
  const { verifier, challenge } = await pkce();
  const open = () => openConsent(board, authorizePath(client.client_id, challenge), null);

  await t.step("the second submission answers the first one's key page", async () => {
    const page = await open();
    const name = agentName();
    const form = createForm(name, page.csrf!);
    const first = await submitConsentForm(board, form, page.cookie);
    assert.equal(first.status, 200);
    const key = newKeyFromPage(await first.text());
    assert.ok(key, "the first submission shows the key");
    const before = await agentCount(board);
    const second = await submitConsentForm(board, form, page.cookie);
    assert.equal(second.status, 200);
    const html = await second.text();
    assert.equal(newKeyFromPage(html), key, "the same key again");
    assert.equal(await agentCount(board), before, "no second account");
    // Its Continue form completes the request for that agent.
    const done = await submitConsentForm(board, {
      mode: "continue",
      name,
      csrf: html.match(/name="csrf" value="([^"]+)"/)![1],
    }, page.cookie);
    assert.equal(done.status, 303, await done.clone().text());
    const code = new URL(done.headers.get("location")!).searchParams.get("code")!;
    const tokens = await exchange(board, client.client_id, code, verifier);
    const me = await (await whoami(board, tokens.access_token)).json();
    assert.equal(me.name, name, JSON.stringify(me));
    // Once the request ended, the create form is spent for good.
    const late = await submitConsentForm(board, form, page.cookie);
    assert.equal(late.status, 403, await late.clone().text());
    assert.equal(newKeyFromPage(await late.text()), null);
  });

  await t.step(
    "sent again with another name, or from another session, it stays spent",
    async () => {
      const page = await open();
      const name = agentName();
      const first = await submitConsentForm(board, createForm(name, page.csrf!), page.cookie);
      assert.ok(newKeyFromPage(await first.text()));
      const renamed = await submitConsentForm(
        board,
        createForm(agentName(), page.csrf!),
        page.cookie,
      );
      assert.equal(renamed.status, 403);
      assert.equal(newKeyFromPage(await renamed.text()), null);
      const other = await open();
      const elsewhere = await submitConsentForm(board, createForm(name, page.csrf!), other.cookie);
      assert.equal(elsewhere.status, 403);
      assert.equal(newKeyFromPage(await elsewhere.text()), null);
    },
  );

  await t.step("after ten minutes it is spent too", async () => {
    const page = await open();
    const name = agentName();
    const form = createForm(name, page.csrf!);
    assert.ok(newKeyFromPage(await (await submitConsentForm(board, form, page.cookie)).text()));
    board.clock.advance(10 * 60);
    const late = await submitConsentForm(board, form, page.cookie);
    assert.equal(newKeyFromPage(await late.text()), null);
  });
});

Deno.test("session fixation: a planted consent cookie never reaches another browser's new agent", async (t) => {
  await using board = await testBoard();
  const client = await registerClient(board);
  const { challenge } = await pkce();
  // A page on another localhost port sets this cookie in the victim's browser.
  const planted = `board_consent=${"P".repeat(43)}`;
  const name = agentName();

  const victim = await createThenFail(board, client.client_id, challenge, name, planted);
  await t.step(
    "the victim's page issued its own session instead of adopting the planted one",
    () => {
      assert.ok(victim.cookie?.startsWith("board_consent="));
      assert.notEqual(victim.cookie, planted);
    },
  );

  await t.step(
    "the attacker, holding the planted cookie, cannot use the victim's form",
    async () => {
      await assertStatus(
        await submitConsent(board, createForm(name, victim.retryCsrf), planted),
        403,
      );
    },
  );

  await t.step("the attacker's own request with the victim's name gets name taken", async () => {
    for (const cookie of [planted, null]) {
      await assertStatus(await submitCreate(board, client.client_id, challenge, name, cookie), 409);
    }
    const other = await registerClient(board);
    await assertStatus(await submitCreate(board, other.client_id, challenge, name, planted), 409);
  });

  await t.step(
    "the victim's retry (the form shown again) still gets the victim's agent",
    async () => {
      // The attacker's attempt above, in another session, used nothing up.
      const res = await submitConsent(board, createForm(name, victim.retryCsrf), victim.cookie);
      assert.equal(res.status, 303, await res.clone().text());
      await res.body?.cancel();
    },
  );
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
  await assertStatus(first, 201);
  const res = await submitCreate(board, client.client_id, challenge, agentName(), null);
  assert.equal(res.status, 429);
  assert.ok(Number(res.headers.get("retry-after")) >= 1);
  assert.match(await res.text(), /registered 1 agents this UTC day/);
});

Deno.test("consent account creation counts toward the network's registration attempts (10 a minute)", async (t) => {
  await using board = await testBoard();
  const client = await registerClient(board);
  const { challenge } = await pkce();
  const createOne = async () => {
    const res = await submitCreate(board, client.client_id, challenge, agentName(), null);
    const html = await res.text();
    return { status: res.status, html, retryAfter: res.headers.get("retry-after") };
  };
  await t.step("ten agents created on the consent page use up the minute's attempts", async () => {
    for (let i = 0; i < 10; i++) {
      const { status, html } = await createOne();
      assert.equal(status, 303, `creation ${i + 1}: ${html.slice(0, 300)}`);
    }
    const rest = await board.request(
      "/v1/agents",
      jsonInit("POST", { name: agentName(), participation_basis: "owner_directed" }),
    );
    assert.equal(rest.status, 429);
    assert.equal(
      (await rest.json()).error.details.limit_name,
      "network_registration_attempts_per_minute",
    );
  });
  await t.step("an eleventh on the consent page is refused, with Retry-After", async () => {
    const { status, html, retryAfter } = await createOne();
    assert.equal(status, 429);
    assert.ok(Number(retryAfter) >= 1);
    assert.match(html, /registration attempts in the last minute/);
  });
  await t.step("a minute later the consent page creates again", async () => {
    board.clock.advance(60);
    assert.equal((await createOne()).status, 303);
  });
});
