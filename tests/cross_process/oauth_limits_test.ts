/**
 * OAuth invariants across processes. The account's daily count of new OAuth clients: two code
 * exchanges for one account, each completing a different client's first authorization, one
 * held just before its commit while the other process commits; with the count scaled to 1 a
 * day, exactly one passes. A consent form submitted to two processes at once does its work once
 * and answers both submissions with it (each of its four kinds: link, deny, create, and Continue
 * on the new key's page), and a network's daily count of consents to never-activated clients
 * holds across processes.
 */
import assert from "node:assert/strict";
import { registerAgent } from "../../domain/accounts/mod.ts";
import { keys } from "../../kv/keys.ts";
import { freshNetwork } from "../helpers.ts";
import {
  agentName,
  authorizeCode,
  authorizePath,
  codeGrant,
  type ConsentPage,
  newKeyFromPage,
  openConsent,
  pkce,
  REDIRECT,
  registerClient,
  registerRequest,
  submitConsentForm,
  tokenRequest,
} from "../oauth_helpers.ts";
import { cluster, whileHeld } from "./instances.ts";

Deno.test("cross-process: an account's new clients of the day stop at the limit", async () => {
  // BOARD_LIMIT_SCALE 0.05: one new client a day per account.
  await using c = await cluster(2, { limitScale: 0.05 }, { turns: false });
  const [a, b] = c.instances;
  const { agent, apiKey } = await registerAgent(c.deps, {
    name: `clients-${crypto.randomUUID().slice(0, 8)}`,
    participation_basis: "owner_directed",
  });
  const codes: Record<string, string>[] = [];
  for (const inst of [a, b]) {
    c.clock.advance(61); // the network's one registration a minute at this scale
    const client = await registerClient(inst);
    const { verifier, challenge } = await pkce();
    const { code } = await authorizeCode(inst, client.client_id, challenge, {
      mode: "link",
      api_key: apiKey,
    });
    codes.push(codeGrant(client.client_id, code, verifier));
  }
  const [held, meanwhile] = [
    () => tokenRequest(a, codes[0], freshNetwork()),
    () => tokenRequest(b, codes[1], freshNetwork()),
  ];
  let other: Response | undefined;
  const first = await whileHeld(a, ["oauth_grant_heads"], held, async () => {
    other = await meanwhile();
  });
  assert.equal(other!.status, 200, await other!.clone().text());
  const body = await first.json();
  assert.equal(first.status, 429, JSON.stringify(body));
  assert.equal(body.error, "too_many_requests");
  const head = (await c.kv.get(keys.oauthGrantHeads(agent.id))).value;
  assert.equal(head?.new_clients, 1);
});

Deno.test("cross-process: a consent form does its work once, whichever process gets it", async (t) => {
  await using c = await cluster(2, {}, { turns: false });
  const [a, b] = c.instances;
  const { apiKey } = await registerAgent(c.deps, {
    name: `forms-${crypto.randomUUID().slice(0, 8)}`,
    participation_basis: "owner_directed",
  });
  const client = await registerClient(a);
  const { challenge } = await pkce();
  /**
   * The form `fields` (with a fresh page's form) sent to a, held before its commit, and to b:
   * b's commit does the work; a's fails its check, reads again and finds the form used by
   * that very submission, so it is answered as b was (the same form sent twice).
   */
  const race = async (fields: Record<string, string>, page?: ConsentPage) => {
    page ??= await openConsent(a, authorizePath(client.client_id, challenge));
    const submit = (inst: typeof a) => () =>
      submitConsentForm(inst, { csrf: page.csrf!, ...fields }, page.cookie);
    let other: Response | undefined;
    const first = await whileHeld(a, ["oauth_request_uses"], submit(a), async () => {
      other = await submit(b)();
    });
    return [first, other!];
  };
  const codeOf = async (res: Response) => {
    assert.equal(res.status, 303, await res.clone().text());
    return new URL(res.headers.get("location")!).searchParams.get("code");
  };
  await t.step("link: one code, both sent back with it", async () => {
    const codes = () => Array.fromAsync(c.kv.list({ prefix: keys.oauthCodes.range() }));
    const before = (await codes()).length;
    const [first, other] = await race({ mode: "link", api_key: apiKey });
    const code = await codeOf(other);
    assert.ok(code);
    assert.equal(await codeOf(first), code);
    assert.equal((await codes()).length, before + 1, "one code issued");
  });
  await t.step("deny", async () => {
    // A client never activated (no code redeemed yet) is not redirected to: the page links back.
    for (const res of await race({ mode: "deny" })) {
      const html = await res.text();
      assert.equal(res.status, 200, html);
      assert.match(html, /id="return-link"/);
      assert.match(html, /error=access_denied/);
    }
  });
  const name = agentName();
  let keyPage: ConsentPage | undefined;
  await t.step("create: one account, one key page, shown to both", async () => {
    const page = await openConsent(a, authorizePath(client.client_id, challenge));
    const [first, other] = await race(
      { mode: "create", participation_basis: "owner_directed", name },
      page,
    );
    const html = await other.text();
    assert.equal(other.status, 200, html);
    const key = newKeyFromPage(html);
    assert.ok(key);
    assert.equal(newKeyFromPage(await first.text()), key);
    assert.ok((await c.kv.get(keys.agentIdByName(name))).value);
    keyPage = { ...page, html, csrf: html.match(/name="csrf" value="([^"]+)"/)![1] };
  });
  await t.step("continue: one code, both sent back with it", async () => {
    const [first, other] = await race({ mode: "continue", name }, keyPage);
    const code = await codeOf(other);
    assert.ok(code);
    assert.equal(await codeOf(first), code);
  });
});

Deno.test("cross-process: a network's consents to new applications stop at the limit", async () => {
  // BOARD_LIMIT_SCALE 0.01: one consent a day from a network to a never-activated client.
  await using c = await cluster(2, { limitScale: 0.01 }, { turns: false });
  const [a, b] = c.instances;
  const { challenge } = await pkce();
  const consent = async (inst: typeof a, i: number) => {
    const { apiKey } = await registerAgent(c.deps, {
      name: `consents-${i}-${crypto.randomUUID().slice(0, 8)}`,
      participation_basis: "owner_directed",
    });
    c.clock.advance(61); // the board's one pending registration a minute at this scale
    const res = await registerRequest(inst, {
      client_name: "Pending client",
      redirect_uris: [REDIRECT],
    }, freshNetwork());
    const { client_id } = await res.json();
    assert.equal(res.status, 201, client_id);
    const page = await openConsent(inst, authorizePath(client_id, challenge));
    assert.equal(page.res.status, 200, page.html);
    return () =>
      submitConsentForm(inst, { mode: "link", api_key: apiKey, csrf: page.csrf! }, page.cookie);
  };
  const [held, meanwhile] = [await consent(a, 0), await consent(b, 1)];
  let other: Response | undefined;
  const first = await whileHeld(a, ["quota_usage"], held, async () => {
    other = await meanwhile();
  });
  assert.equal(other!.status, 303, await other!.clone().text());
  const html = await first.text();
  assert.equal(first.status, 429, html);
  assert.match(html, /Your network has connected 1 new applications this UTC day/);
});
