import assert from "node:assert/strict";
import { consentFormToken, openCredential, sealCredential } from "../domain/accounts/mod.ts";
import { keys } from "../kv/keys.ts";
import { ManualClock } from "../domain/clock.ts";
import { wrapCommits } from "./commit_wrapper.ts";
import { assertStatus, boardOn, register, type TestBoard, testBoard } from "./helpers.ts";
import { kvChanges, kvSnapshot } from "./reliability/harness.ts";
import {
  agentName,
  authorizePath,
  connect,
  exchange,
  newKeyFromPage,
  openConsent,
  pkce,
  REDIRECT,
  registerClient,
  submitConsent,
  submitConsentForm,
  whoami,
} from "./oauth_helpers.ts";

/** The `csrf` of the form a page shows. */
function formOf(html: string): string {
  const csrf = html.match(/name="csrf" value="([^"]+)"/)?.[1];
  assert.ok(csrf, html.slice(0, 300));
  return csrf;
}

Deno.test("opening a consent page stores nothing: the request travels sealed in its form", async (t) => {
  await using board = await testBoard();
  const { challenge } = await pkce();
  const longState = "s".repeat(2048);

  await t.step("twenty pages of a connected application leave the store as it was", async () => {
    const { clientId } = await connect(board);
    const before = await kvSnapshot(board.kv);
    for (let i = 0; i < 20; i++) {
      const page = await openConsent(
        board,
        authorizePath(clientId, challenge, { state: longState }),
      );
      assert.equal(page.res.status, 200);
      assert.ok(page.csrf && page.csrf.length > 2048, "the form carries the request");
    }
    assert.deepEqual(kvChanges(before, await kvSnapshot(board.kv)), []);
  });

  await t.step(
    "for a pending registration only the client's own entry is kept longer",
    async () => {
      const client = await registerClient(board);
      const stored = async () => (await board.kv.get(keys.oauthClients(client.client_id))).value!;
      const expiry = (await stored()).expires_at;
      // Late in its hour, so that a request (15 minutes, then a code's 2) outlives it.
      board.clock.advance(50 * 60);
      const before = await kvSnapshot(board.kv);
      for (let i = 0; i < 20; i++) {
        await openConsent(board, authorizePath(client.client_id, challenge, { state: longState }));
      }
      const changes = kvChanges(before, await kvSnapshot(board.kv));
      assert.equal(changes.length, 1, changes.join("\n"));
      assert.match(changes[0], /^changed \["oauth_clients"/);
      assert.ok((await stored()).expires_at > expiry, "the pending client is kept longer");
    },
  );

  await t.step("a submitted form is recorded in well under 100 bytes", async () => {
    const client = await registerClient(board);
    const page = await openConsent(
      board,
      authorizePath(client.client_id, challenge, { state: longState }),
    );
    // (The request the first step's connection completed keeps its code too, sealed.)
    for await (const e of board.kv.list({ prefix: keys.oauthRequestUses.range() })) {
      await board.kv.delete(e.key);
    }
    const before = await kvSnapshot(board.kv);
    const res = await submitConsent(board, { mode: "deny", csrf: page.csrf! }, page.cookie);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const changes = kvChanges(before, await kvSnapshot(board.kv));
    assert.equal(changes.length, 1, changes.join("\n"));
    assert.match(changes[0], /^added \["oauth_request_uses"/);
    const [record] = await Array.fromAsync(
      board.kv.list({ prefix: keys.oauthRequestUses.range() }),
    );
    const bytes = JSON.stringify(record.key).length + JSON.stringify(record.value).length;
    assert.ok(bytes < 100, `${bytes} bytes`);
  });
});

Deno.test("consent forms: each works once, an older one never after a newer, none after the end", async (t) => {
  await using board = await testBoard();
  const client = await registerClient(board);
  const { challenge } = await pkce();
  const open = async () => {
    const page = await openConsent(board, authorizePath(client.client_id, challenge));
    assert.equal(page.res.status, 200);
    return page;
  };
  const create = (csrf: string, cookie: string | null, name = agentName()) =>
    submitConsentForm(
      board,
      { mode: "create", participation_basis: "owner_directed", name, csrf },
      cookie,
    );

  await t.step("a form shown again after an error replaces the one before it", async () => {
    const page = await open();
    const bad = await create(page.csrf!, page.cookie, "NO");
    assert.equal(bad.status, 400);
    const next = formOf(await bad.text());
    assert.notEqual(next, page.csrf);
    await assertStatus(await create(page.csrf!, page.cookie), 403);
    const keyPage = await create(next, page.cookie);
    assert.equal(keyPage.status, 200);
    const html = await keyPage.text();
    const cont = formOf(html);
    const name = html.match(/name="name" value="([^"]+)"/)![1];
    // The form before the key page makes no second agent: sent again with the same name (a
    // double click) it shows the same key page, with another name it no longer works.
    const again = await create(next, page.cookie, name);
    assert.equal(again.status, 200);
    assert.equal(newKeyFromPage(await again.text()), newKeyFromPage(html));
    await assertStatus(await create(next, page.cookie), 403);
    const done = await submitConsentForm(
      board,
      { mode: "continue", name, csrf: cont },
      page.cookie,
    );
    assert.equal(done.status, 303, await done.clone().text());
    // The form before the key page sent again after the connection was made (back, then
    // reload): expired, without saying that nothing reached the application.
    const reloaded = await create(next, page.cookie, name);
    assert.equal(reloaded.status, 403);
    const expired = await reloaded.text();
    assert.match(expired, /If the application has not connected/);
    assert.doesNotMatch(expired, /Nothing was sent/);
    // After the request is completed none of its forms works, whatever its number.
    const later = await consentFormToken(
      board.deps,
      JSON.parse(await decodeForTest(board, cont)),
      99,
    );
    await assertStatus(
      await submitConsentForm(board, { mode: "continue", name, csrf: later }, page.cookie),
      403,
    );
  });

  await t.step(
    "submissions of one form at once: one completion, each sent back with it",
    async () => {
      const agent = await register(board);
      const page = await open();
      const codes = async () =>
        (await Array.fromAsync(board.kv.list({ prefix: keys.oauthCodes.range() }))).length;
      const before = await codes();
      const link = () =>
        submitConsentForm(
          board,
          { mode: "link", api_key: agent.key, csrf: page.csrf! },
          page.cookie,
        );
      const answers = await Promise.all([link(), link(), link()]);
      await Promise.all(answers.map((r) => r.body?.cancel()));
      assert.deepEqual(answers.map((r) => r.status), [303, 303, 303]);
      const sent = answers.map((r) => new URL(r.headers.get("location")!).searchParams.get("code"));
      assert.equal(new Set(sent).size, 1, "the same code to each");
      assert.equal(await codes(), before + 1, "one code issued");
    },
  );

  await t.step("a form altered, cut, or sealed under another secret is refused", async () => {
    const page = await open();
    const [iv, ct] = page.csrf!.split(".");
    const flipped = ct.slice(0, 10) + (ct[10] === "A" ? "B" : "A") + ct.slice(11);
    const other = await consentFormToken(
      { ...board.deps, config: { ...board.deps.config, secret: "x".repeat(40) } },
      JSON.parse(await decodeForTest(board, page.csrf!)),
      0,
    );
    // The same request sealed under the key of linked credentials (another purpose).
    const asCredential = await sealCredential(
      board.deps,
      "consent-form",
      JSON.stringify({ r: JSON.parse(await decodeForTest(board, page.csrf!)), n: 0 }),
    );
    for (
      const csrf of [
        `${iv}.${flipped}`,
        iv,
        `${page.csrf}.x`,
        other,
        ".",
        `${asCredential.iv}.${asCredential.ct}`,
      ]
    ) {
      await assertStatus(await create(csrf, page.cookie), 403);
    }
    // None of those used the form up.
    await assertStatus(await create(page.csrf!, page.cookie), 200);
  });

  await t.step(
    "a form spelled otherwise (the unused bits of its last character) is refused",
    async () => {
      // A state whose form ends in a character with unused bits (a ciphertext of 3n+1 or 3n+2 bytes).
      let page = await open();
      const ctOf = (csrf: string) => csrf.split(".")[1];
      for (let n = 1; ctOf(page.csrf!).length % 4 === 0; n++) {
        page = await openConsent(
          board,
          authorizePath(client.client_id, challenge, { state: "s".repeat(n) }),
        );
      }
      const [iv, ct] = page.csrf!.split(".");
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
      const respelled = ct.slice(0, -1) + alphabet[alphabet.indexOf(ct.at(-1)!) + 1];
      await assertStatus(await create(`${iv}.${respelled}`, page.cookie), 403);
      await assertStatus(await create(page.csrf!, page.cookie), 200);
    },
  );

  await t.step(
    "the longest state and redirect URI fit in the form and come back whole",
    async () => {
      const base = `${REDIRECT}?${"p".repeat(1960)}=1`;
      const long = await registerClient(board, { redirect_uris: [base] });
      const state = "é".repeat(2048);
      const page = await openConsent(
        board,
        authorizePath(long.client_id, challenge, { state, redirect_uri: base }),
      );
      assert.equal(page.res.status, 200);
      const res = await submitConsent(
        board,
        {
          mode: "create",
          participation_basis: "owner_directed",
          name: agentName(),
          csrf: page.csrf!,
        },
        page.cookie,
      );
      assert.equal(res.status, 303, await res.clone().text());
      const location = new URL(res.headers.get("location")!);
      assert.equal(location.searchParams.get("state"), state);
      assert.ok(location.searchParams.get("code"));
    },
  );

  await t.step("a form expires with its request (15 minutes)", async () => {
    const page = await open();
    board.clock.advance(15 * 60);
    await assertStatus(await create(page.csrf!, page.cookie), 403);
  });
});

/** The request a form carries (opened with the board's own secret, as the server does). */
async function decodeForTest(board: TestBoard, csrf: string): Promise<string> {
  const [iv, ct] = csrf.split(".");
  const plain = await openCredential(
    board.deps,
    "consent-form",
    { v: 1, iv, ct },
    "consent-form-v1",
  );
  assert.ok(plain);
  return JSON.stringify(JSON.parse(plain).r);
}

Deno.test("a submission whose commit keeps conflicting changes nothing, and its form still works", async () => {
  let conflicting = false;
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: (raw) =>
      wrapCommits(raw, (commit) => conflicting ? Promise.resolve({ ok: false }) : commit()),
  });
  const agent = await register(board);
  const client = await registerClient(board);
  const { challenge } = await pkce();
  const page = await openConsent(board, authorizePath(client.client_id, challenge));
  const fields = { mode: "link", api_key: agent.key, csrf: page.csrf! };
  conflicting = true;
  const busy = await submitConsentForm(board, fields, page.cookie);
  assert.equal(busy.status, 503);
  assert.equal(busy.headers.get("retry-after"), "1");
  assert.match(await busy.text(), /Nothing was changed/);
  conflicting = false;
  const done = await submitConsentForm(board, fields, page.cookie);
  assert.equal(done.status, 303, await done.clone().text());
  await done.body?.cancel();
});

/** The consent cookie a browser holds after `res`, which answered a request sent with `cookie`. */
function cookieAfter(res: Response, cookie: string | null): string | null {
  const set = res.headers.get("set-cookie")?.split(";")[0];
  if (set === undefined) return cookie;
  return set.endsWith("=") ? null : set;
}

Deno.test("a form sent twice (a double click) answers as the first did: Continue, Link, Deny", async (t) => {
  await using board = await testBoard();
  const { clientId } = await connect(board); // an application that completed before
  const { verifier, challenge } = await pkce();
  const open = async () => {
    const page = await openConsent(board, authorizePath(clientId, challenge));
    assert.equal(page.res.status, 200);
    return page;
  };
  // The second is sent as a browser sends it once the first answer came: with the cookies that
  // answer left (the first's redirect cut short by the second click).
  const twice = async (fields: Record<string, string>, cookie: string | null) => {
    const first = await submitConsentForm(board, fields, cookie);
    const second = await submitConsentForm(board, fields, cookieAfter(first, cookie));
    return [first, second];
  };
  const codeOf = (res: Response) => {
    assert.equal(res.status, 303);
    return new URL(res.headers.get("location")!).searchParams.get("code");
  };

  await t.step("Continue under a new key: the same redirect, the same code, once", async () => {
    const page = await open();
    const created = await submitConsentForm(board, {
      mode: "create",
      name: agentName(),
      participation_basis: "owner_directed",
      csrf: page.csrf!,
    }, page.cookie);
    const html = await created.text();
    const fields = {
      mode: "continue",
      name: html.match(/name="name" value="([^"]+)"/)![1],
      csrf: formOf(html),
    };
    const [first, second] = await twice(fields, page.cookie);
    const code = codeOf(first);
    assert.ok(code);
    assert.equal(codeOf(second), code);
    const tokens = await exchange(board, clientId, code, verifier);
    assert.equal((await whoami(board, tokens.access_token)).status, 200);
    // Once the code is redeemed the form is spent (the code presented again would revoke the
    // connection it made): refused, and the connection stands.
    await assertStatus(await submitConsentForm(board, fields, page.cookie), 403);
    assert.equal((await whoami(board, tokens.access_token)).status, 200);
  });

  await t.step("past the code's two minutes the form is spent like any other", async () => {
    const page = await open();
    const a = await register(board);
    const fields = { mode: "link", api_key: a.key, csrf: page.csrf! };
    const first = await submitConsentForm(board, fields, page.cookie);
    assert.ok(codeOf(first));
    board.clock.advance(121);
    await assertStatus(await submitConsentForm(board, fields, page.cookie), 403);
  });

  await t.step("Link: the same key again gets the same code; another key does not", async () => {
    const [a, b] = [await register(board), await register(board)];
    const page = await open();
    const fields = { mode: "link", api_key: a.key, csrf: page.csrf! };
    const [first, second] = await twice(fields, page.cookie);
    assert.equal(codeOf(second), codeOf(first));
    await assertStatus(
      await submitConsentForm(board, { ...fields, api_key: b.key }, page.cookie),
      403,
    );
  });

  await t.step("Deny: sent back with access_denied again", async () => {
    const page = await open();
    const [first, second] = await twice({ mode: "deny", csrf: page.csrf! }, page.cookie);
    for (const res of [first, second]) {
      assert.equal(res.status, 303);
      const back = new URL(res.headers.get("location")!);
      assert.equal(back.searchParams.get("error"), "access_denied");
    }
  });
});
