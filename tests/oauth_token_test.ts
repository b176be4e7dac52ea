import assert from "node:assert/strict";
import { assertStatus, type TestBoard, testBoard } from "./helpers.ts";
import {
  authorizeCode,
  codeGrant,
  connect,
  exchange,
  pkce,
  REDIRECT,
  refreshGrant,
  registerClient,
  tokenRequest,
  type Tokens,
  whoami,
} from "./oauth_helpers.ts";
import {
  type GrantRecord,
  newSecret,
  type RefreshRecord,
  ROTATED_HASHES_KEPT,
  secretHash,
  TTL,
} from "../domain/accounts/mod.ts";
import { keys } from "../kv/keys.ts";

async function oauthError(res: Response, status: number, error: string) {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.error, error, JSON.stringify(body));
  assert.equal(typeof body.error_description, "string");
  assert.equal(res.headers.get("cache-control"), "no-store");
}

async function codeFor(board: TestBoard, scope?: string) {
  // Each code creates an agent on the consent page: a network creates at most 10 a minute.
  board.clock.advance(7);
  const client = await registerClient(board, scope ? { scope } : {});
  const { verifier, challenge } = await pkce();
  const { code } = await authorizeCode(board, client.client_id, challenge);
  return { clientId: client.client_id, code, verifier };
}

/** Sends `fields` to the token endpoint and asserts the OAuth error `error` with `status`. */
async function tokenError(
  board: TestBoard,
  fields: Record<string, string>,
  status: number,
  error: string,
) {
  await oauthError(await tokenRequest(board, fields), status, error);
}

Deno.test("authorization code exchange", async (t) => {
  await using board = await testBoard();

  await t.step("returns opaque bearer tokens with no-store", async () => {
    const { clientId, code, verifier } = await codeFor(board);
    const res = await tokenRequest(board, codeGrant(clientId, code, verifier));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.equal(res.headers.get("pragma"), "no-cache");
    const body = await res.json();
    assert.equal(body.token_type, "Bearer");
    assert.equal(body.expires_in, 3600);
    assert.equal(body.scope, "board:read board:write");
    // The secret, then the agent and grant the token names (read with it in one batch).
    const named = /^pb_(?:at|rt)_[A-Za-z0-9_-]{43}\.[0-9a-f-]{36}\.[0-9a-f-]{36}$/;
    assert.match(body.access_token, named);
    assert.match(body.refresh_token, named);
    assert.match(body.access_token, /^pb_at_/);
    assert.match(body.refresh_token, /^pb_rt_/);
  });

  await t.step("wrong PKCE verifier refused, and the code is burned", async () => {
    const { clientId, code, verifier } = await codeFor(board);
    const wrong = (await pkce()).verifier;
    await tokenError(board, codeGrant(clientId, code, wrong), 400, "invalid_grant");
    await tokenError(board, codeGrant(clientId, code, verifier), 400, "invalid_grant");
  });

  await t.step("malformed verifier is an invalid request", async () => {
    const { clientId, code } = await codeFor(board);
    await tokenError(board, codeGrant(clientId, code, "short"), 400, "invalid_request");
  });

  await t.step("code reuse refused and the tokens it produced revoked", async () => {
    const { clientId, code, verifier } = await codeFor(board);
    const tokens = await exchange(board, clientId, code, verifier);
    assert.equal((await whoami(board, tokens.access_token)).status, 200);
    await tokenError(board, codeGrant(clientId, code, verifier), 400, "invalid_grant");
    await assertStatus(await whoami(board, tokens.access_token), 401);
    await tokenError(board, refreshGrant(clientId, tokens.refresh_token), 400, "invalid_grant");
  });

  await t.step("redirect_uri must equal the authorization request's", async () => {
    const { clientId, code, verifier } = await codeFor(board);
    await tokenError(
      board,
      codeGrant(clientId, code, verifier, { redirect_uri: "http://127.0.0.1:7777/other" }),
      400,
      "invalid_grant",
    );
  });

  await t.step(
    "redirect_uri left out of both requests, or sent only to the token endpoint",
    async () => {
      // The client registered one URI and the authorization request left it out (docs/oauth.md):
      // the token request may leave it out too (RFC 6749 §4.1.3) or send that URI, nothing else.
      // Four agents are created on the consent page below: a network creates 10 a minute.
      board.clock.advance(60);
      const client = await registerClient(board);
      const omitted = { redirect_uri: null };
      for (const sent of [undefined, REDIRECT]) {
        const { verifier, challenge } = await pkce();
        const { code } = await authorizeCode(
          board,
          client.client_id,
          challenge,
          undefined,
          omitted,
        );
        const fields = codeGrant(client.client_id, code, verifier);
        if (sent === undefined) delete fields.redirect_uri;
        else fields.redirect_uri = sent;
        const res = await tokenRequest(board, fields);
        const tokens = await res.json();
        assert.equal(
          res.status,
          200,
          `redirect_uri ${sent ?? "left out"}: ${JSON.stringify(tokens)}`,
        );
        assert.equal((await whoami(board, tokens.access_token)).status, 200);
      }
      const { verifier, challenge } = await pkce();
      const { code } = await authorizeCode(board, client.client_id, challenge, undefined, omitted);
      await tokenError(
        board,
        codeGrant(client.client_id, code, verifier, {
          redirect_uri: "http://127.0.0.1:7777/other",
        }),
        400,
        "invalid_grant",
      );
      // Sent in the authorization request: required at the token endpoint. Left out, the
      // request is malformed (as one without a verifier) and the code stays for the retry.
      const sent = await pkce();
      const given = await authorizeCode(board, client.client_id, sent.challenge);
      const fields = codeGrant(client.client_id, given.code, sent.verifier);
      delete fields.redirect_uri;
      await tokenError(board, fields, 400, "invalid_request");
      const retried = await tokenRequest(
        board,
        codeGrant(client.client_id, given.code, sent.verifier),
      );
      assert.equal(retried.status, 200, JSON.stringify(await retried.clone().json()));
    },
  );

  await t.step("wrong resource refused", async () => {
    const { clientId, code, verifier } = await codeFor(board);
    await tokenError(
      board,
      codeGrant(clientId, code, verifier, { resource: "http://board.test/api" }),
      400,
      "invalid_target",
    );
  });

  await t.step("a code is bound to its client", async () => {
    const { code, verifier } = await codeFor(board);
    const other = await registerClient(board);
    await tokenError(board, codeGrant(other.client_id, code, verifier), 400, "invalid_grant");
  });

  await t.step("codes expire after two minutes", async () => {
    const { clientId, code, verifier } = await codeFor(board);
    board.clock.advance(120);
    await tokenError(board, codeGrant(clientId, code, verifier), 400, "invalid_grant");
  });
});

Deno.test("token endpoint request errors", async (t) => {
  await using board = await testBoard();
  const { clientId, code, verifier } = await codeFor(board);

  await t.step("a client secret or Basic auth is refused (public clients)", async () => {
    await tokenError(
      board,
      codeGrant(clientId, code, verifier, { client_secret: "s" }),
      401,
      "invalid_client",
    );
    const basic = await board.request("/oauth/token", {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${btoa(`${clientId}:x`)}`,
      },
      body: new URLSearchParams(codeGrant(clientId, code, verifier)).toString(),
    });
    // RFC 6749 §5.2: answered with the scheme the client authenticated with.
    assert.equal(basic.headers.get("www-authenticate"), 'Basic realm="oauth"');
    assert.equal(basic.headers.get("cache-control"), "no-store");
    await oauthError(basic, 401, "invalid_client");
  });

  await t.step("unknown or missing client", async () => {
    await tokenError(board, codeGrant("nope", code, verifier), 401, "invalid_client");
    await tokenError(board, { grant_type: "authorization_code", code }, 400, "invalid_request");
  });

  await t.step("unsupported grant type, JSON body, repeated parameter", async () => {
    await tokenError(
      board,
      { grant_type: "password", client_id: clientId },
      400,
      "unsupported_grant_type",
    );
    const json = await board.request("/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(codeGrant(clientId, code, verifier)),
    });
    await oauthError(json, 400, "invalid_request");
    const repeated = await board.request("/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(codeGrant(clientId, code, verifier)).toString() + "&code=x",
    });
    await oauthError(repeated, 400, "invalid_request");
  });

  await t.step("the code survives malformed requests", async () => {
    assert.ok((await exchange(board, clientId, code, verifier)).access_token);
  });
});

Deno.test("access tokens last one hour", async () => {
  await using board = await testBoard();
  const { tokens } = await connect(board);
  board.clock.advance(3599);
  await assertStatus(await whoami(board, tokens.access_token), 200);
  board.clock.advance(1);
  const expired = await whoami(board, tokens.access_token);
  assert.equal(expired.status, 401);
  assert.match(expired.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
  assert.match((await expired.json()).error_description, /expired/);
});

Deno.test("refresh tokens rotate on every use a minute apart; reuse revokes the grant", async (t) => {
  await using board = await testBoard();
  const { clientId, tokens: first } = await connect(board);
  const refresh = async (token: string) => {
    board.clock.advance(TTL.refreshGrace);
    const res = await tokenRequest(board, refreshGrant(clientId, token));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "no-store");
    return await res.json();
  };
  const second = await refresh(first.refresh_token);
  const third = await refresh(second.refresh_token);

  await t.step("each refresh returns new access and refresh tokens", async () => {
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.notEqual(third.refresh_token, second.refresh_token);
    assert.notEqual(second.access_token, first.access_token);
    assert.equal(third.expires_in, 3600);
    await assertStatus(await whoami(board, third.access_token), 200);
  });

  await t.step("presenting a rotated refresh token revokes the whole grant", async () => {
    await tokenError(board, refreshGrant(clientId, first.refresh_token), 400, "invalid_grant");
    await assertStatus(await whoami(board, third.access_token), 401);
    await tokenError(board, refreshGrant(clientId, third.refresh_token), 400, "invalid_grant");
  });
});

/**
 * Refreshes `token` `times` times in a row, `apart` seconds after the one before (by default
 * past a rotation's grace, so each rotates), asserting success; returns every token set.
 */
async function refreshChain(
  board: TestBoard,
  clientId: string,
  token: string,
  times: number,
  apart: number = TTL.refreshGrace,
): Promise<Tokens[]> {
  const chain: Tokens[] = [];
  for (let i = 0; i < times; i++) {
    if (i > 0) board.clock.advance(apart);
    const res = await tokenRequest(
      board,
      refreshGrant(clientId, chain.at(-1)?.refresh_token ?? token),
    );
    const body = await res.json();
    assert.equal(res.status, 200, `refresh ${i + 1}: ${JSON.stringify(body)}`);
    chain.push(body);
  }
  return chain;
}

/** How many refresh-token records the store holds. */
async function refreshRecords(board: TestBoard): Promise<number> {
  let n = 0;
  for await (const _ of board.kv.list({ prefix: keys.oauthRefreshTokens.range() })) n++;
  return n;
}

Deno.test("a rotated refresh token leaves no record; its grant remembers it", async (t) => {
  await using board = await testBoard();

  await t.step("after many refreshes the store holds the current token's record only", async () => {
    const { clientId, tokens } = await connect(board);
    const chain = await refreshChain(board, clientId, tokens.refresh_token, 20);
    assert.equal(await refreshRecords(board), 1);
    const grantId = tokens.access_token.split(".")[2];
    const grant = (await board.kv.get<GrantRecord>(keys.oauthGrants(grantId))).value!;
    assert.equal(grant.rotated_hashes?.length, ROTATED_HASHES_KEPT);
    assert.equal(grant.refresh_hash, await secretHash("refresh", chain.at(-1)!.refresh_token));
  });

  for (const back of [1, ROTATED_HASHES_KEPT]) {
    await t.step(
      `reusing the token of ${back} rotation(s) back revokes the connection`,
      async () => {
        const { clientId, tokens } = await connect(board);
        const chain = await refreshChain(board, clientId, tokens.refresh_token, 10);
        board.clock.advance(TTL.refreshGrace); // past the grace of the last replaced token
        const reused = [tokens, ...chain].at(-1 - back)!;
        const res = await tokenRequest(board, refreshGrant(clientId, reused.refresh_token));
        const body = await res.json();
        assert.equal(res.status, 400);
        assert.equal(body.error, "invalid_grant");
        assert.match(body.error_description, /already used; the connection is revoked/);
        await assertStatus(await whoami(board, chain.at(-1)!.access_token), 401);
        await tokenError(
          board,
          refreshGrant(clientId, chain.at(-1)!.refresh_token),
          400,
          "invalid_grant",
        );
      },
    );
  }

  await t.step("a made-up token naming the connection does not revoke it", async () => {
    const { clientId, tokens } = await connect(board);
    const [, agentId, grantId] = tokens.refresh_token.split(".");
    const madeUp = `${newSecret("pb_rt_")}.${agentId}.${grantId}`;
    const res = await tokenRequest(board, refreshGrant(clientId, madeUp));
    const body = await res.json();
    assert.equal(res.status, 400);
    assert.equal(body.error, "invalid_grant");
    assert.match(body.error_description, /invalid or expired/);
    await assertStatus(await whoami(board, tokens.access_token), 200);
    await refreshChain(board, clientId, tokens.refresh_token, 1);
  });

  await t.step("a rotated record stored before grants remembered hashes still counts", async () => {
    const { clientId, tokens } = await connect(board);
    const [next] = await refreshChain(board, clientId, tokens.refresh_token, 1);
    // As an older store holds it: the replaced token kept as "rotated", the grant without hashes.
    const grantId = tokens.access_token.split(".")[2];
    const grant = (await board.kv.get<GrantRecord>(keys.oauthGrants(grantId))).value!;
    const { rotated_hashes: _, ...older } = grant;
    await board.kv.set(keys.oauthGrants(grantId), older);
    const oldHash = await secretHash("refresh", tokens.refresh_token);
    await board.kv.set(
      keys.oauthRefreshTokens(oldHash),
      {
        grant_id: grantId,
        client_id: clientId,
        issued_at: grant.created_at,
        expires_at: grant.created_at + TTL.refresh,
        rotated_at: grant.refreshed_at,
      } satisfies RefreshRecord,
    );
    await tokenError(board, refreshGrant(clientId, tokens.refresh_token), 400, "invalid_grant");
    await assertStatus(await whoami(board, next.access_token), 401);
  });

  await t.step("revoking a rotated token ends the connection", async () => {
    const { clientId, tokens } = await connect(board);
    const [next] = await refreshChain(board, clientId, tokens.refresh_token, 1);
    await assertStatus(
      await revoke(board, { token: tokens.refresh_token, client_id: clientId }),
      200,
    );
    await assertStatus(await whoami(board, next.access_token), 401);
  });
});

Deno.test("within a minute of a rotation, its token and the one it replaced get that token back", async (t) => {
  await using board = await testBoard();
  const presented = async (clientId: string, token: string) => {
    const res = await tokenRequest(board, refreshGrant(clientId, token));
    return { status: res.status, body: await res.json() };
  };

  await t.step(
    "parallel refreshes with one token: one successor, an access token each",
    async () => {
      const { clientId, tokens } = await connect(board);
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => presented(clientId, tokens.refresh_token)),
      );
      assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200]);
      const successors = new Set(answers.map((a) => a.body.refresh_token));
      assert.equal(successors.size, 1, "every answer carries the same refresh token");
      assert.equal(new Set(answers.map((a) => a.body.access_token)).size, 4);
      for (const a of answers) await assertStatus(await whoami(board, a.body.access_token), 200);
      // A minute on, the successor rotates as usual, and then the first token is a reuse.
      board.clock.advance(TTL.refreshGrace);
      const [next] = await refreshChain(board, clientId, answers[0].body.refresh_token, 1);
      const late = await presented(clientId, tokens.refresh_token);
      assert.equal(late.status, 400);
      assert.match(late.body.error_description, /already used; the connection is revoked/);
      await assertStatus(await whoami(board, next.access_token), 401);
    },
  );

  await t.step("the token a rotation handed out comes back unrotated for a minute", async () => {
    const { clientId, tokens } = await connect(board);
    const [first] = await refreshChain(board, clientId, tokens.refresh_token, 1);
    board.clock.advance(TTL.refreshGrace - 1);
    const again = await presented(clientId, first.refresh_token);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.refresh_token, first.refresh_token, "not rotated again");
    assert.notEqual(again.body.access_token, first.access_token);
    board.clock.advance(1);
    const rotated = await presented(clientId, first.refresh_token);
    assert.notEqual(rotated.body.refresh_token, first.refresh_token, "rotated a minute on");
    await assertStatus(await whoami(board, again.body.access_token), 200);
  });

  await t.step(
    "a retry 59 seconds later gets the same successor; at 60 it is a reuse",
    async () => {
      const { clientId, tokens } = await connect(board);
      const [first] = await refreshChain(board, clientId, tokens.refresh_token, 1);
      board.clock.advance(TTL.refreshGrace - 1);
      const retry = await presented(clientId, tokens.refresh_token);
      assert.equal(retry.status, 200, JSON.stringify(retry.body));
      assert.equal(retry.body.refresh_token, first.refresh_token);
      board.clock.advance(1);
      const late = await presented(clientId, tokens.refresh_token);
      assert.equal(late.status, 400);
      assert.equal(late.body.error, "invalid_grant");
      await assertStatus(await whoami(board, retry.body.access_token), 401);
    },
  );
});

Deno.test("a connection refreshes at most 200 times a UTC day", async () => {
  await using board = await testBoard();
  const { clientId, tokens } = await connect(board);
  // Counted whether they rotate or, within a rotation's grace, answer its token again.
  const chain = await refreshChain(board, clientId, tokens.refresh_token, 200, 0);
  const current = chain.at(-1)!.refresh_token;
  const res = await tokenRequest(board, refreshGrant(clientId, current));
  const body = await res.json();
  assert.equal(res.status, 429);
  assert.equal(body.error, "too_many_requests");
  assert.equal(res.headers.get("cache-control"), "no-store");
  // The test clock starts at noon UTC: the next UTC day begins in 12 hours.
  assert.equal(res.headers.get("retry-after"), String(12 * 3600));
  assert.match(
    body.error_description,
    /200 at most; it may refresh again from 2026-01-06T00:00:00Z/,
  );
  // Nothing was spent: the refused token is still the current one, and the connection stands.
  await assertStatus(await whoami(board, chain.at(-1)!.access_token), 200);
  board.clock.advance(12 * 3600);
  await refreshChain(board, clientId, current, 1);
});

Deno.test("refresh tokens last 30 days from their issue", async () => {
  await using board = await testBoard();
  const { clientId, tokens } = await connect(board);
  board.clock.advance(29 * 86400);
  const res = await tokenRequest(board, refreshGrant(clientId, tokens.refresh_token));
  assert.equal(res.status, 200);
  const next = await res.json();
  board.clock.advance(30 * 86400);
  await tokenError(board, refreshGrant(clientId, next.refresh_token), 400, "invalid_grant");
});

Deno.test("refresh may narrow scopes, never widen them, and is bound to the client", async () => {
  await using board = await testBoard();
  const { clientId, tokens } = await connect(board);
  const narrow = await tokenRequest(
    board,
    refreshGrant(clientId, tokens.refresh_token, { scope: "board:read" }),
  );
  assert.equal(narrow.status, 200);
  const narrowed = await narrow.json();
  assert.equal(narrowed.scope, "board:read");
  const me = await (await whoami(board, narrowed.access_token)).json();
  assert.deepEqual(me.scopes, ["board:read"]);
  // The grant keeps both scopes: the next refresh may ask for write again.
  const wide = await tokenRequest(board, refreshGrant(clientId, narrowed.refresh_token));
  const widened = await wide.json();
  assert.equal(widened.scope, "board:read board:write");
  await tokenError(
    board,
    refreshGrant(clientId, widened.refresh_token, { scope: "board:admin" }),
    400,
    "invalid_scope",
  );
  const other = await registerClient(board);
  await tokenError(
    board,
    refreshGrant(other.client_id, widened.refresh_token),
    400,
    "invalid_grant",
  );
});

function revoke(board: TestBoard, fields: Record<string, string>) {
  return board.request("/oauth/revoke", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
}

Deno.test("RFC 7009 revocation", async (t) => {
  await using board = await testBoard();

  await t.step("revoking an access token ends it alone", async () => {
    const { clientId, tokens } = await connect(board);
    await assertStatus(
      await revoke(board, { token: tokens.access_token, client_id: clientId }),
      200,
    );
    await assertStatus(await whoami(board, tokens.access_token), 401);
    await assertStatus(
      await tokenRequest(board, refreshGrant(clientId, tokens.refresh_token)),
      200,
    );
  });

  await t.step("revoking a refresh token ends the whole connection", async () => {
    const { clientId, tokens } = await connect(board);
    const res = await revoke(board, {
      token: tokens.refresh_token,
      token_type_hint: "refresh_token",
      client_id: clientId,
    });
    await assertStatus(res, 200);
    await assertStatus(await whoami(board, tokens.access_token), 401);
    await tokenError(board, refreshGrant(clientId, tokens.refresh_token), 400, "invalid_grant");
  });

  await t.step("unknown tokens answer 200", async () => {
    await assertStatus(await revoke(board, { token: "pb_at_doesnotexist" }), 200);
  });

  await t.step("another client's token is left alone", async () => {
    const { tokens } = await connect(board);
    const other = await registerClient(board);
    await assertStatus(
      await revoke(board, { token: tokens.access_token, client_id: other.client_id }),
      200,
    );
    await assertStatus(await whoami(board, tokens.access_token), 200);
  });

  await t.step("form body required; unknown client refused", async () => {
    const json = await board.request("/oauth/revoke", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: "x" }),
    });
    assert.equal(json.status, 400);
    assert.equal((await json.json()).error, "invalid_request");
    // Unknown, or no id the board could have issued (refused before any read).
    for (const client_id of ["no-such-client", "x".repeat(5000)]) {
      const unknown = await revoke(board, { token: "x", client_id });
      assert.equal(unknown.status, 401);
      assert.equal((await unknown.json()).error, "invalid_client");
    }
  });
});
