import assert from "node:assert/strict";
import { getAgentByName } from "../domain/accounts/mod.ts";
import { assertStatus, jsonInit, register, testBoard } from "./helpers.ts";
import {
  activatedClient,
  agentName,
  authorizeCode,
  authorizePath,
  BASE,
  exchange,
  openConsent,
  pkce,
  REDIRECT,
  registerClient,
  submitConsent,
  tokenRequest,
  whoami,
} from "./oauth_helpers.ts";

function assertPageError(res: Response, status: number) {
  assert.equal(res.status, status);
  assert.equal(res.headers.get("location"), null, "no redirect to the client");
  assert.match(res.headers.get("content-type") ?? "", /text\/html/);
}

/** A refusal shown on a page (never redirected); its body is discarded. */
async function refusedPage(res: Response, status: number) {
  assertPageError(res, status);
  await res.body?.cancel();
}

/**
 * An error shown on a page (never redirected) with a link back to the client: the link's
 * address (the error response at the redirect URI).
 */
async function linkedError(res: Response): Promise<URL> {
  const html = await res.text();
  assertPageError(res, 400);
  const href = html.match(/<a href="([^"]+)" rel="noreferrer" id="return-link">/)?.[1];
  assert.ok(href, html);
  const url = new URL(href.replaceAll("&amp;", "&"));
  assert.equal(url.origin + url.pathname, REDIRECT);
  return url;
}

Deno.test("the consent page", async (t) => {
  await using board = await testBoard();
  const client = await registerClient(board, { client_name: "<script>alert(1)</script> Helper" });
  const { challenge } = await pkce();
  const page = await openConsent(board, authorizePath(client.client_id, challenge));

  await t.step(
    "renders both ways with a hidden csrf and the client's name and redirect host",
    () => {
      assert.equal(page.res.status, 200);
      assert.match(page.res.headers.get("content-type") ?? "", /text\/html/);
      assert.ok(page.csrf && page.csrf.length >= 43);
      assert.match(page.html, /name="mode" value="create"/);
      assert.match(page.html, /name="mode" value="link"/);
      assert.match(page.html, /name="name"/);
      assert.match(page.html, /name="participation_basis"/);
      assert.match(page.html, /name="api_key"/);
      assert.match(page.html, /127\.0\.0\.1:7777/);
      assert.ok(page.html.includes("&lt;script&gt;alert(1)&lt;/script&gt; Helper"));
      assert.ok(!page.html.includes("<script>alert(1)"));
    },
  );

  await t.step("cannot be framed, is not cached and is not CORS-open", async () => {
    assert.equal(page.res.headers.get("x-frame-options"), "DENY");
    const csp = page.res.headers.get("content-security-policy") ?? "";
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /form-action http:\/\/board\.test http:\/\/127\.0\.0\.1:7777/);
    assert.equal(page.res.headers.get("cache-control"), "no-store");
    const cors = await board.request(authorizePath(client.client_id, challenge), {
      headers: { origin: "https://evil.example" },
    });
    await cors.body?.cancel();
    assert.equal(cors.headers.get("access-control-allow-origin"), null);
  });

  await t.step("has the site's layout: one main landmark, the site stylesheet, navigation", () => {
    assert.equal(page.html.match(/<main\b/g)?.length, 1);
    assert.match(page.html, /<main id="content">[\s\S]*<h1>Connect/);
    assert.match(page.html, /<link rel="stylesheet" href="\/assets\/site.css\?v=[0-9a-f]+"/);
    assert.match(page.html, /<nav aria-label="Main">/);
    assert.match(page.res.headers.get("content-security-policy") ?? "", /style-src 'self'/);
    assert.equal(page.res.headers.get("referrer-policy"), "same-origin");
    // Every participation basis is a choice of its own (no clipped drop-down on phones),
    // none chosen for the person, and one must be chosen.
    assert.equal(page.html.match(/type="radio" name="participation_basis"/g)?.length, 3);
    assert.equal(page.html.match(/name="participation_basis"[^>]*required/g)?.length, 3);
    assert.doesNotMatch(page.html, /name="participation_basis"[^>]*checked/);
  });

  await t.step("sets an HttpOnly consent session cookie", () => {
    assert.ok(page.cookie?.startsWith("board_consent="));
  });
});

Deno.test("authorization errors before the redirect URI is validated stay on a page", async (t) => {
  await using board = await testBoard();
  const client = await registerClient(board, {
    redirect_uris: [REDIRECT, "https://app.example/cb"],
  });
  const { challenge } = await pkce();

  await t.step("unknown client", async () => {
    const page = await openConsent(board, authorizePath("no-such-client", challenge));
    assertPageError(page.res, 400);
    assert.equal(page.csrf, null);
  });

  await t.step("redirect URI mismatch is refused without redirecting", async () => {
    const uris = [
      "https://evil.example/cb",
      "https://app.example/cb2",
      "http://127.0.0.1:7777/other",
    ];
    for (const redirect_uri of uris) {
      const page = await openConsent(
        board,
        authorizePath(client.client_id, challenge, { redirect_uri }),
      );
      assertPageError(page.res, 400);
      assert.match(page.html, /does not match/);
    }
  });

  await t.step("missing redirect URI when several are registered", async () => {
    const path = authorizePath(client.client_id, challenge, { redirect_uri: null });
    assertPageError((await openConsent(board, path)).res, 400);
  });

  await t.step("repeated client_id", async () => {
    const path = authorizePath(client.client_id, challenge) + `&client_id=${client.client_id}`;
    assertPageError((await openConsent(board, path)).res, 400);
  });
});

Deno.test("loopback redirect URIs match on any port", async () => {
  await using board = await testBoard();
  const client = await registerClient(board);
  const { verifier, challenge } = await pkce();
  const other = "http://127.0.0.1:5555/callback";
  const { code, location } = await authorizeCode(
    board,
    client.client_id,
    challenge,
    undefined,
    { redirect_uri: other },
  );
  assert.equal(location.origin + location.pathname, other);
  const res = await tokenRequest(board, {
    grant_type: "authorization_code",
    client_id: client.client_id,
    code,
    code_verifier: verifier,
    redirect_uri: other,
  });
  await assertStatus(res, 200);
  // Only URI characters: tabs, newlines and controls the URL parser would drop or escape
  // do not make another spelling of the registered address.
  const escaped = await registerClient(board, {
    redirect_uris: ["http://127.0.0.1/cb?q=%01%01z"],
  });
  for (
    const spelling of [
      "http://127.0.0.1:5555/c\tb?q=%01%01z",
      "http://127.0.0.1:5555/cb?q=\u0001\u0001z",
      "http://127.0.0.1:5555/cb?q=%01%01\nz",
    ]
  ) {
    const refused = await openConsent(
      board,
      authorizePath(escaped.client_id, challenge, { redirect_uri: spelling }),
    );
    assertPageError(refused.res, 400);
  }
  const kept = await openConsent(
    board,
    authorizePath(escaped.client_id, challenge, {
      redirect_uri: "http://127.0.0.1:5555/cb?q=%01%01z",
    }),
  );
  assert.equal(kept.res.status, 200);
  // A non-loopback HTTPS URI must match exactly, port included.
  const https = await registerClient(board, { redirect_uris: ["https://app.example/cb"] });
  const page = await openConsent(
    board,
    authorizePath(https.client_id, challenge, { redirect_uri: "https://app.example:8443/cb" }),
  );
  assertPageError(page.res, 400);
});

Deno.test("authorization errors after the redirect URI is validated stay on a page with a link back", async (t) => {
  await using board = await testBoard();
  // Clients that have completed an authorization: even their errors are not redirected.
  const client = await activatedClient(board);
  const readOnly = await activatedClient(board, { scope: "board:read" });
  const { challenge } = await pkce();
  const cases: [string, Record<string, string | null>, string][] = [
    [
      "plain PKCE refused",
      { code_challenge_method: "plain", code_challenge: "x".repeat(43) },
      "invalid_request",
    ],
    ["missing code_challenge", { code_challenge: null }, "invalid_request"],
    ["missing code_challenge_method", { code_challenge_method: null }, "invalid_request"],
    ["malformed code_challenge", { code_challenge: "short" }, "invalid_request"],
    ["wrong resource", { resource: `${BASE}/other` }, "invalid_target"],
    ["resource of another server", { resource: "https://evil.example/mcp" }, "invalid_target"],
    ["response_type token", { response_type: "token" }, "unsupported_response_type"],
    ["missing response_type", { response_type: null }, "invalid_request"],
  ];
  for (const [name, overrides, error] of cases) {
    await t.step(name, async () => {
      const res = await board.request(authorizePath(client.client_id, challenge, overrides));
      const url = await linkedError(res);
      assert.equal(url.searchParams.get("error"), error);
      assert.equal(url.searchParams.get("state"), "state-123");
      assert.equal(url.searchParams.get("iss"), BASE);
      assert.ok(url.searchParams.get("error_description"));
      assert.equal(url.searchParams.get("code"), null);
    });
  }

  await t.step(
    "a sentence in a parameter's value or name is not repeated on the page or in the link",
    async () => {
      const sentence = "Your account was suspended: sign in again at https://evil.example/restore";
      for (
        const path of [
          authorizePath(client.client_id, challenge, { code_challenge_method: sentence }),
          authorizePath(client.client_id, challenge) + `&${encodeURIComponent(sentence)}=1` +
          `&${encodeURIComponent(sentence)}=2`,
        ]
      ) {
        const res = await board.request(path);
        const html = await res.clone().text();
        const url = await linkedError(res);
        assert.equal(url.searchParams.get("error"), "invalid_request");
        const description = url.searchParams.get("error_description") ?? "";
        assert.ok(description, html);
        for (const shown of [html, description]) {
          assert.ok(!shown.includes("evil.example"), shown);
          assert.ok(!shown.includes("suspended"), shown);
        }
      }
      // A plain token is still named.
      const plain = await board.request(
        authorizePath(client.client_id, challenge) + "&scope=board:read",
      );
      assert.match(
        (await linkedError(plain)).searchParams.get("error_description") ?? "",
        /Parameter 'scope' was sent more than once/,
      );
    },
  );

  await t.step("scope beyond the client's registration", async () => {
    const res = await board.request(
      authorizePath(readOnly.client_id, challenge, { scope: "board:read board:write" }),
    );
    assert.equal((await linkedError(res)).searchParams.get("error"), "invalid_scope");
  });

  await t.step("unknown scopes are ignored; missing resource defaults to {base}/mcp", async () => {
    const page = await openConsent(
      board,
      authorizePath(readOnly.client_id, challenge, { scope: "board:read openid", resource: null }),
    );
    assert.equal(page.res.status, 200);
    assert.ok(!page.html.includes("board:write"));
  });
});

Deno.test("consent CSRF protection", async (t) => {
  await using board = await testBoard();
  const client = await registerClient(board);
  const { challenge } = await pkce();
  const open = (overrides: Record<string, string> = {}, cookie?: string | null) =>
    openConsent(board, authorizePath(client.client_id, challenge, overrides), cookie);
  /** Submits a create form for a fresh name with `csrf` (none when undefined). */
  const create = (csrf: string | undefined, cookie: string | null, headers = {}) =>
    submitConsent(
      board,
      {
        mode: "create",
        participation_basis: "owner_directed",
        name: agentName(),
        ...(csrf === undefined ? {} : { csrf }),
      },
      cookie,
      headers,
    );

  await t.step("missing or wrong csrf refused", async () => {
    const page = await open();
    await refusedPage(await create(undefined, page.cookie), 403);
    await refusedPage(await create("A".repeat(43), page.cookie), 403);
  });

  await t.step("a csrf token is single-use, even when the submission failed", async () => {
    const failed = await open();
    const bad = await submitConsent(
      board,
      { mode: "create", participation_basis: "owner_directed", name: "NO", csrf: failed.csrf! },
      failed.cookie,
    );
    await assertStatus(bad, 400);
    await refusedPage(await create(failed.csrf!, failed.cookie), 403);
    const page = await open();
    const first = await create(page.csrf!, page.cookie);
    assert.equal(first.status, 303);
    await refusedPage(await create(page.csrf!, page.cookie), 403);
  });

  await t.step(
    "a csrf token works only with the browser session that opened the page",
    async () => {
      const page = await open();
      const other = await open();
      assert.notEqual(page.cookie, other.cookie);
      for (const cookie of [null, other.cookie]) {
        await refusedPage(await create(page.csrf!, cookie), 403);
      }
    },
  );

  await t.step("cross-site submissions refused", async () => {
    const page = await open();
    await refusedPage(
      await create(page.csrf!, page.cookie, { origin: "https://evil.example" }),
      403,
    );
    await refusedPage(
      await create(page.csrf!, page.cookie, { "sec-fetch-site": "cross-site" }),
      403,
    );
  });

  await t.step("each page gets a fresh session; a csrf works only with its own", async () => {
    const a = await open({ state: "A" });
    const b = await open({ state: "B" }, a.cookie);
    assert.notEqual(b.cookie, a.cookie, "the session is rotated, not adopted");
    const pairs: [string, string | null][] = [[a.csrf!, b.cookie], [b.csrf!, a.cookie]];
    for (const [csrf, cookie] of pairs) await refusedPage(await create(csrf, cookie), 403);
    const b2 = await open({ state: "B" }, a.cookie);
    const res = await create(b2.csrf!, b2.cookie);
    assert.equal(res.status, 303);
    assert.equal(new URL(res.headers.get("location")!).searchParams.get("state"), "B");
    // The session is kept to its end: a second click must find it (the double-click tests).
    assert.equal(res.headers.get("set-cookie"), null);
  });

  await t.step("a planted cookie is never adopted", async () => {
    const planted = `board_consent=${"Q".repeat(43)}`;
    const page = await open({}, planted);
    assert.ok(page.cookie && page.cookie !== planted);
    await refusedPage(await create(page.csrf!, planted), 403);
  });

  await t.step("Origin: null (a no-referrer page's form) is refused", async () => {
    const page = await open();
    await refusedPage(await create(page.csrf!, page.cookie, { origin: "null" }), 403);
  });

  await t.step("a csrf token expires with its request (15 minutes)", async () => {
    const page = await open();
    board.clock.advance(15 * 60);
    await refusedPage(await create(page.csrf!, page.cookie), 403);
  });
});

Deno.test("consent mode=create registers a new agent", async (t) => {
  await using board = await testBoard();
  const client = await registerClient(board);
  const { verifier, challenge } = await pkce();
  const open = (clientId = client.client_id) =>
    openConsent(board, authorizePath(clientId, challenge));

  await t.step("invalid fields re-render the page with a fresh csrf", async () => {
    const page = await open();
    const bad = await submitConsent(
      board,
      {
        mode: "create",
        name: "Bad Name!",
        participation_basis: "owner_directed",
        csrf: page.csrf!,
      },
      page.cookie,
    );
    assert.equal(bad.status, 400);
    const html = await bad.text();
    assert.match(html, /Field &quot;name&quot; is invalid|Field "name" is invalid/);
    const csrf = html.match(/name="csrf" value="([^"]+)"/)?.[1];
    assert.ok(csrf && csrf !== page.csrf);
    const basis = await submitConsent(
      board,
      { mode: "create", name: agentName(), participation_basis: "whatever", csrf: csrf! },
      page.cookie,
    );
    assert.equal(basis.status, 400);
    const refusedHtml = await basis.text();
    const csrf2 = refusedHtml.match(/name="csrf" value="([^"]+)"/)?.[1];
    const missing = await submitConsent(
      board,
      { mode: "create", name: agentName(), csrf: csrf2! },
      page.cookie,
    );
    assert.equal(missing.status, 400, "a basis nobody chose is refused");
    const missingHtml = await missing.text();
    assert.match(
      missingHtml,
      /id="basis-error"[^>]*>No participation basis was chosen\. Choose one below\./,
    );
    const csrf3 = missingHtml.match(/name="csrf" value="([^"]+)"/)?.[1];
    const name = agentName();
    const ok = await submitConsent(
      board,
      { mode: "create", name, participation_basis: "autonomous_discovery", csrf: csrf3! },
      page.cookie,
    );
    assert.equal(ok.status, 303);
    const location = new URL(ok.headers.get("location")!);
    assert.equal(location.searchParams.get("state"), "state-123");
    assert.equal(location.searchParams.get("iss"), BASE);
    const agent = await getAgentByName(board.deps, name);
    assert.equal(agent?.participation_basis, "autonomous_discovery");
    const code = location.searchParams.get("code")!;
    const tokens = await exchange(board, client.client_id, code, verifier);
    const me = await (await whoami(board, tokens.access_token)).json();
    assert.equal(me.name, name);
    assert.equal(me.agent_id, agent?.id);
  });

  await t.step("a taken name is refused on the page", async () => {
    const taken = await register(board);
    const page = await open();
    const res = await submitConsent(
      board,
      { mode: "create", name: taken.name, participation_basis: "owner_directed", csrf: page.csrf! },
      page.cookie,
    );
    assert.equal(res.status, 409);
    assert.match(await res.text(), /already taken/);
  });

  await t.step("deny of a never-completed client shows a page with a link back", async () => {
    const fresh = await registerClient(board);
    const page = await open(fresh.client_id);
    const res = await submitConsent(board, { mode: "deny", csrf: page.csrf! }, page.cookie);
    const html = await res.text();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("location"), null, "not redirected");
    assert.match(html, /Connection denied/);
    const href = html.match(/<a href="([^"]+)" rel="noreferrer" id="return-link">/)?.[1];
    const url = new URL(href!.replaceAll("&amp;", "&"));
    assert.equal(url.origin + url.pathname, REDIRECT);
    assert.equal(url.searchParams.get("error"), "access_denied");
    assert.equal(url.searchParams.get("state"), "state-123");
  });

  await t.step(
    "deny of a client that completed an authorization redirects with access_denied",
    async () => {
      const known = await activatedClient(board);
      const page = await open(known.client_id);
      const res = await submitConsent(board, { mode: "deny", csrf: page.csrf! }, page.cookie);
      assert.equal(res.status, 303);
      const url = new URL(res.headers.get("location")!);
      assert.equal(url.searchParams.get("error"), "access_denied");
      assert.equal(url.searchParams.get("state"), "state-123");
    },
  );
});

Deno.test("consent mode=link connects an existing agent; the moderator key is refused", async (t) => {
  const moderatorKey = "moderator-key-for-tests-0123456789abcdef";
  await using board = await testBoard({ moderatorKey });
  const client = await registerClient(board);
  const agent = await register(board);
  const { verifier, challenge } = await pkce();
  const open = (cookie?: string | null) =>
    openConsent(board, authorizePath(client.client_id, challenge), cookie);
  const link = (api_key: string, csrf: string, cookie: string | null) =>
    submitConsent(board, { mode: "link", api_key, csrf }, cookie);

  await t.step("a valid key links its agent", async () => {
    const { code } = await authorizeCode(board, client.client_id, challenge, {
      mode: "link",
      api_key: agent.key,
    });
    const tokens = await exchange(board, client.client_id, code, verifier);
    const me = await (await whoami(board, tokens.access_token)).json();
    assert.equal(me.agent_id, agent.id);
    assert.equal(me.via, "oauth");
  });

  await t.step("the moderator key is refused as an unknown key", async () => {
    const page = await open();
    const res = await link(moderatorKey, page.csrf!, page.cookie);
    assertPageError(res, 401);
    assert.match(await res.text(), /invalid or has been revoked/);
  });

  await t.step("an unknown or revoked key is refused", async () => {
    const page = await open();
    await refusedPage(await link("pb_live_" + "x".repeat(43), page.csrf!, page.cookie), 401);
    const revoked = await register(board);
    const rv = await board.request("/v1/me/revoke", jsonInit("POST", {}, revoked.key));
    await rv.body?.cancel();
    const page2 = await open();
    await refusedPage(await link(revoked.key, page2.csrf!, page2.cookie), 401);
  });

  await t.step(
    "linking is one commit: a refused key uses the form up, the form shown again links",
    async () => {
      const page = await open();
      const refused = await link("pb_live_" + "y".repeat(43), page.csrf!, page.cookie);
      assertPageError(refused, 401);
      const again = (await refused.text()).match(/name="csrf" value="([^"]+)"/)?.[1];
      assert.ok(again, "the form is shown again with a fresh token");
      // The first token was used up by the refused submission, even with the right key now.
      await refusedPage(await link(agent.key, page.csrf!, page.cookie), 403);
      // Another browser's session cannot use the fresh token.
      const elsewhere = await open();
      await refusedPage(await link(agent.key, again, elsewhere.cookie), 403);
      // That refusal used the fresh token up too: the page's own session opens the form anew.
      const fresh = await open(page.cookie);
      const done = await link(agent.key, fresh.csrf!, fresh.cookie);
      assert.equal(done.status, 303, await done.clone().text());
      const code = new URL(done.headers.get("location")!).searchParams.get("code");
      assert.ok(code);
      await done.body?.cancel();
      const tokens = await exchange(board, client.client_id, code, verifier);
      assert.equal((await (await whoami(board, tokens.access_token)).json()).agent_id, agent.id);
    },
  );
});
