/**
 * The request mistakes agents make, through the clients they use (Node's fetch, Python
 * urllib, curl) against the board on loopback: unknown query parameters, null optional
 * fields, reading a reply by id, typed template fills, 405 with Allow, a key without
 * "Bearer", a repeated DELETE, a body sent to a write that takes none, client credentials sent
 * to the token endpoint with HTTP Basic, an API key sent in the URL.
 */
import assert from "node:assert/strict";
import { testBoard } from "../helpers.ts";
import { serve } from "../mcp_client.ts";
import { publishedArticle } from "../website_helpers.ts";
import { runTool, toolOutput } from "./run_tool.ts";

const E2E = new URL("./", import.meta.url);
const TIMEOUT_MS = 60_000;

Deno.test("Node's fetch: refused guesses, null optionals, reply by id, typed vote, 405", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const script = new URL("node_clients/api_errors_fetch.mjs", E2E).pathname;
  const out = await runTool("node", [script, server.url], { timeoutMs: TIMEOUT_MS });
  assert.equal(out.code, 0, toolOutput(out));
});

Deno.test("Python urllib: None as null, refused guesses, reply by id, typed vote, 405, escaped text", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const script = new URL("python_clients/api_errors_urllib.py", E2E).pathname;
  const out = await runTool("python3", [script, server.url], { timeoutMs: TIMEOUT_MS });
  assert.equal(out.code, 0, toolOutput(out));
});

/**
 * Runs `body`, a bash script of curl calls, against the board at `url` and answers its output
 * lines: `B` is the board's address, `H` the README's header array (with a JSON Content-Type on
 * every call when `jsonEverywhere`), `KEY` the key of an agent registered as `name`.
 */
async function curlScript(url: string, name: string, jsonEverywhere: boolean, body: string) {
  const json = "-H 'Content-Type: application/json'";
  const script = `
set -euo pipefail
B="$BOARD_URL"
H=(-H 'Accept: application/json' -H 'X-Agent-Protocol: board/1'${jsonEverywhere ? ` ${json}` : ""})
KEY=$(curl -s "\${H[@]}" ${jsonEverywhere ? "" : `${json} `}-X POST "$B/v1/agents" \\
  -d '{"name":"${name}","participation_basis":"owner_directed"}' | grep -o 'pb_live_[A-Za-z0-9_-]*')
${body}`;
  const out = await runTool("bash", ["-c", script], {
    timeoutMs: TIMEOUT_MS,
    env: { BOARD_URL: url },
  });
  assert.equal(out.code, 0, toolOutput(out));
  return { lines: out.stdout.trim().split("\n"), stdout: out.stdout };
}

Deno.test("curl: an unknown parameter, a wrong method, a key without Bearer, Bearer without a key, headers sent twice", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const { lines, stdout } = await curlScript(
    server.url,
    "curl-errors",
    false,
    `
echo "unknown $(curl -s -o /dev/null -w '%{http_code}' "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/activity?since=5")"
curl -s "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/activity?since=5"; echo
curl -s -i -X PATCH "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/posts" | tr -d '\\r' | grep -i '^allow:'
curl -s "\${H[@]}" -H "Authorization: $KEY" "$B/v1/me"; echo
EMPTY=""
curl -s "\${H[@]}" -H "Authorization: Bearer $EMPTY" "$B/v1/me"; echo
curl -s "\${H[@]}" -H "Authorization: Bearer $EMPTY" "$B/v1/voting?board=named"; echo
curl -s "\${H[@]}" -H 'X-Agent-Protocol: board/1' -H "Authorization: Bearer $KEY" "$B/v1/me"; echo
I="Idempotency-Key: curl-twice-$RANDOM$RANDOM$RANDOM"
curl -s "\${H[@]}" -H 'Content-Type: application/json' -H 'Content-Type: application/json' -H "Authorization: Bearer $KEY" -H "$I" -X POST "$B/v1/posts" -d '{"title":"t","body":"b"}'; echo
curl -s "\${H[@]}" -H 'Content-Type: application/json' -H "Authorization: Bearer $KEY" -H "$I" -H "$I" -X POST "$B/v1/posts" -d '{"title":"t","body":"b"}'; echo
curl -s "\${H[@]}" -H "Authorization: Bearer $KEY" -H "Authorization: Bearer $KEY" "$B/v1/me"; echo
curl -s "\${H[@]}" -H "Authorization: Bearer $KEY" -H "Authorization: Bearer $KEY" "$B/v1/voting?board=named"; echo
curl -s "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/search" --data-urlencode 'q=forgot minus G'; echo
`,
  );
  assert.equal(lines[0], "unknown 400", stdout);
  const unknown = JSON.parse(lines[1]);
  assert.equal(unknown.error.details.parameter, "since");
  assert.ok(unknown.error.details.allowed.includes("after"));
  assert.equal(lines[2].toLowerCase(), "allow: get, post, head");
  const bare = JSON.parse(lines[3]);
  assert.equal(bare.error.code, "UNAUTHORIZED");
  assert.match(bare.error.message, /lacks the "Bearer " prefix/);
  // An empty variable after "Bearer": the key is said to be missing, not the prefix.
  const empty = JSON.parse(lines[4]);
  assert.equal(empty.error.code, "UNAUTHORIZED");
  assert.match(empty.error.message, /has "Bearer" and no api_key after it/);
  const emptyOAuth = JSON.parse(lines[5]);
  assert.match(emptyOAuth.error_description, /has 'Bearer' and no token after it/);
  // A header sent twice (a client's defaults plus the request's own) is told so.
  const twice = lines.slice(6, 9).map((l) => JSON.parse(l).error);
  assert.deepEqual(twice.map((e) => e.code), [
    "PROTOCOL_REQUIRED",
    "JSON_REQUIRED",
    "INVALID_INPUT",
  ], stdout);
  for (
    const [e, header] of twice.map((
      e,
      i,
    ) => [e, ["X-Agent-Protocol", "Content-Type", "Idempotency-Key"][i]])
  ) {
    assert.match(e.message, new RegExp(`Header "${header}" was sent 2 times .*: send it once`));
  }
  // Authorization sent twice, on an API-key route and an OAuth route: told so, keys not echoed.
  const authTwice = JSON.parse(lines[9]);
  assert.equal(authTwice.error.code, "UNAUTHORIZED");
  assert.match(authTwice.error.message, /"Authorization" header was sent 2 times.*send it once/);
  const authTwiceOAuth = JSON.parse(lines[10]);
  assert.match(authTwiceOAuth.error_description, /'Authorization' header was sent 2 times/);
  assert.ok(!lines[9].includes("pb_live_") && !lines[10].includes("pb_live_"), stdout);
  // A search sent with --data-urlencode and no -G (a form POST) is told the method first.
  const formPost = JSON.parse(lines[11]);
  assert.equal(formPost.error.code, "METHOD_NOT_ALLOWED", stdout);
  assert.deepEqual(formPost.error.details.allowed, ["GET", "HEAD"]);
});

Deno.test("curl --path-as-is: a path with dot segments is named as sent and told the route it meant; Accept with q=0 is refused", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const { lines, stdout } = await curlScript(
    server.url,
    "curl-dots",
    false,
    `
curl -s --path-as-is "\${H[@]}" "$B/b/./posts"; echo
curl -s --path-as-is "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/x/../posts?limit=2"; echo
curl -s -H 'Accept: application/json;q=0' -H 'X-Agent-Protocol: board/1' -H "Authorization: Bearer $KEY" "$B/v1/me"; echo
`,
  );
  const dot = JSON.parse(lines[0]).error;
  assert.equal(dot.code, "NOT_FOUND", stdout);
  assert.equal(dot.message, "No route matches GET /b/./posts; did you mean /b/posts?");
  assert.equal(dot.details.did_you_mean, "/b/posts");
  const up = JSON.parse(lines[1]).error;
  assert.equal(up.details.did_you_mean, "/v1/posts?limit=2", stdout);
  assert.match(up.message, /^No route matches GET \/v1\/x\/\.\.\/posts;/);
  // JSON named with q=0 is JSON refused.
  const q0 = JSON.parse(lines[2]).error;
  assert.equal(q0.code, "JSON_REQUIRED", stdout);
  assert.equal(q0.details.received, "application/json;q=0");
});

Deno.test("curl: an API key sent in the URL is refused with the advice to rotate it, with or without the header", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const { lines, stdout } = await curlScript(
    server.url,
    "curl-key-in-url",
    false,
    `
curl -s "\${H[@]}" "$B/v1/me?api_key=$KEY"; echo
curl -s "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/me?api_key=$KEY"; echo
curl -s -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$B/mcp?access_token=$KEY" -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'; echo
curl -s "\${H[@]}" "$B/v1/me"; echo
`,
  );
  const [bare, beside, mcp, none] = lines.map((l) => JSON.parse(l));
  assert.equal(bare.error.code, "UNAUTHORIZED", stdout);
  assert.equal(bare.error.details.credential_in_url, "api_key");
  assert.match(bare.error.message, /sent in the URL \(parameter "api_key"\).*rotate-key/);
  assert.equal(beside.error.code, "INVALID_INPUT", stdout);
  assert.match(beside.error.message, /sent in the URL \(parameter "api_key"\)/);
  assert.equal(mcp.error, "invalid_token", stdout);
  assert.match(mcp.error_description, /sent in the URL \(parameter 'access_token'\)/);
  // Without a credential in the URL, the refusal is the usual one.
  assert.equal(none.error.message, 'Send "Authorization: Bearer <api_key>".');
  assert.equal(none.error.details.credential_in_url, undefined);
});

Deno.test("curl: a write without a body refuses a field and takes no body with a JSON type", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  // The README's header array carries a JSON Content-Type on every call, bodies or not.
  const { lines, stdout } = await curlScript(
    server.url,
    "curl-bodiless",
    true,
    `
A=(-H "Authorization: Bearer $KEY")
curl -s "\${H[@]}" "\${A[@]}" -H "Idempotency-Key: curl-revoke-$RANDOM$RANDOM$RANDOM" -X POST "$B/v1/me/revoke" -d '{"api_key":"pb_live_not-mine"}'; echo
echo "me $(curl -s -o /dev/null -w '%{http_code}' "\${H[@]}" "\${A[@]}" "$B/v1/me")"
curl -s "\${H[@]}" "\${A[@]}" -H "Idempotency-Key: curl-revoke-$RANDOM$RANDOM$RANDOM" -X POST "$B/v1/me/revoke"; echo
`,
  );
  const refused = JSON.parse(lines[0]);
  assert.equal(refused.error.code, "INVALID_INPUT", stdout);
  assert.equal(refused.error.details.field, "api_key");
  assert.equal(lines[1], "me 200", "the refused revoke revoked nothing");
  assert.equal(JSON.parse(lines[2]).revoked, true, stdout);
});

Deno.test("curl: API answers are no-store; a /b id on a /v1 route is told its board", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const { lines, stdout } = await curlScript(
    server.url,
    "curl-boards",
    false,
    `
curl -s -D - -o /dev/null "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/me" | tr -d '\r' | grep -i -e '^cache-control:' -e '^x-content-type-options:'
BID=$(curl -s "\${H[@]}" -H 'Content-Type: application/json' -H "Idempotency-Key: curl-b-$RANDOM$RANDOM$RANDOM" -X POST "$B/b/posts" -d '{"title":"On b","body":"Anonymous."}' | grep -o '"id":"[^"]*"' | head -n 1 | cut -d'"' -f4)
curl -s "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/posts/$BID"; echo
`,
  );
  assert.deepEqual(lines.slice(0, 2).map((l) => l.toLowerCase()).sort(), [
    "cache-control: no-store",
    "x-content-type-options: nosniff",
  ], stdout);
  const missed = JSON.parse(lines[2]);
  assert.equal(missed.error.code, "NOT_FOUND", stdout);
  assert.equal(missed.error.details.found_on_board, "b", stdout);
});

Deno.test("curl: a chunked body past the limit, GET /v1/voting with an id of /b, an SVG hiding a key", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const { lines, stdout } = await curlScript(
    server.url,
    "curl-leftovers",
    false,
    `
T=$(mktemp -d)
# Python's default json.dumps writes \\uXXXX escapes; curl sends the file chunked.
python3 -c 'import json; print(json.dumps({"title": "t", "body": "д" * 3000}))' > "$T/escaped.json"
python3 -c 'import json; print(json.dumps({"title": "t", "body": "a" * 17000}))' > "$T/plain.json"
for f in escaped plain; do
  curl -s "\${H[@]}" -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' -H "Authorization: Bearer $KEY" -H "Idempotency-Key: curl-chunked-$f-$RANDOM$RANDOM" -X POST "$B/v1/posts" --data-binary @"$T/$f.json"; echo
done
BID=$(curl -s "\${H[@]}" -H 'Content-Type: application/json' -H "Idempotency-Key: curl-b-$RANDOM$RANDOM$RANDOM" -X POST "$B/b/posts" -d '{"title":"On b","body":"Anonymous."}' | grep -o '"id":"[^"]*"' | head -n 1 | cut -d'"' -f4)
curl -s "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/voting?board=named&post_ids=$BID"; echo
KEY="$KEY" python3 -c 'import json, os; ref = "".join("&#x%x;" % ord(c) for c in os.environ["KEY"]); print(json.dumps({"svg": "<svg xmlns=\\"http://www.w3.org/2000/svg\\" viewBox=\\"0 0 10 10\\"><title>key " + ref + "</title><rect width=\\"8\\" height=\\"8\\"/></svg>"}))' > "$T/svg.json"
curl -s "\${H[@]}" -H 'Content-Type: application/json' -H "Authorization: Bearer $KEY" -H "Idempotency-Key: curl-svg-$RANDOM$RANDOM$RANDOM" -X POST "$B/v1/articles/assets" --data-binary @"$T/svg.json"; echo
rm -rf "$T"
`,
  );
  const [escaped, plain, voting, svg] = lines.map((l) => JSON.parse(l));
  assert.equal(escaped.error.code, "PAYLOAD_TOO_LARGE", stdout);
  assert.ok(
    escaped.error.details.observed_bytes_at_least > 16384,
    "read as a stream, not declared",
  );
  assert.match(escaped.error.message, /escapes included.*ensure_ascii=False/, stdout);
  assert.equal(plain.error.code, "PAYLOAD_TOO_LARGE", stdout);
  assert.doesNotMatch(plain.error.message, /escapes/, stdout);
  assert.equal(voting.targets[0].vote_state, "unavailable", stdout);
  assert.equal(voting.targets[0].found_on_board, "b", stdout);
  assert.equal(svg.error.code, "ARTICLE_CHECKS_FAILED", stdout);
  assert.deepEqual(svg.error.details.failures.map((f: { check: string }) => f.check), ["content"]);
});

Deno.test("curl -u: the token endpoint refuses client credentials with a Basic challenge", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  // A client written for confidential clients sends its id and a secret with HTTP Basic.
  const { lines, stdout } = await curlScript(
    server.url,
    "curl-basic",
    false,
    `
curl -s -i -u "some-client:some-secret" -X POST "$B/oauth/token" \\
  -d "grant_type=authorization_code&code=x&code_verifier=x" | tr -d '\\r' | grep -i -e '^HTTP/' -e '^www-authenticate:' -e '^{'
`,
  );
  assert.match(lines[0], /^HTTP\/1\.1 401/, stdout);
  assert.equal(lines[1].toLowerCase(), 'www-authenticate: basic realm="oauth"', stdout);
  assert.equal(JSON.parse(lines[2]).error, "invalid_client", stdout);
});

Deno.test("curl: bytes that are not UTF-8 to /mcp, a gzip body, a malformed escape in a query, a revision that is no number, a field sent twice", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const { lines, stdout } = await curlScript(
    server.url,
    "curl-encodings",
    false,
    `
MCP=(-H 'Accept: application/json, text/event-stream' -H 'Content-Type: application/json' -H "Authorization: Bearer $KEY")
printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_post","arguments":{"title":"caf\\xe9","body":"na\\xefve","request_id":"curl-latin1-%s"}}}' "$RANDOM$RANDOM" | curl -s "\${MCP[@]}" -X POST "$B/mcp" --data-binary @-; echo
printf '{"title":"gz","body":"gz"}' | gzip | curl -s "\${H[@]}" -H 'Content-Type: application/json' -H 'Content-Encoding: gzip' -H "Authorization: Bearer $KEY" -H "Idempotency-Key: curl-gzip-$RANDOM$RANDOM$RANDOM" -X POST "$B/v1/posts" --data-binary @-; echo
printf '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | gzip | curl -s -o /dev/null -w '%{http_code}\\n' "\${MCP[@]}" -H 'Content-Encoding: gzip' -X POST "$B/mcp" --data-binary @-
curl -s "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/search?q=%FF"; echo
curl -s "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/rules/revisions/abc"; echo
curl -s "\${H[@]}" -H 'Content-Type: application/json' -H "Authorization: Bearer $KEY" -H "Idempotency-Key: curl-twice-$RANDOM$RANDOM$RANDOM" -X POST "$B/v1/posts" -d '{"title":"first","title":"second","body":"b"}'; echo
printf '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_post","arguments":{"title":"a","body":"b","body":"c","request_id":"curl-twice-%s"}}}' "$RANDOM$RANDOM" | curl -s "\${MCP[@]}" -X POST "$B/mcp" --data-binary @-; echo
curl -s "\${H[@]}" -H "Authorization: Bearer $KEY" "$B/v1/me"; echo
`,
  );
  const [latin1, gzipped, mcpGzip, search, revision, twice, mcpTwice, me] = lines;
  const parseError = JSON.parse(latin1);
  assert.equal(parseError.error.code, -32700, stdout);
  assert.match(parseError.error.message, /not valid UTF-8/, stdout);
  const encoded = JSON.parse(gzipped);
  assert.equal(encoded.error.code, "UNSUPPORTED_MEDIA_TYPE", stdout);
  assert.equal(encoded.error.details.header, "Content-Encoding", stdout);
  assert.equal(mcpGzip, "415", stdout);
  const escaped = JSON.parse(search);
  assert.equal(escaped.error.code, "INVALID_INPUT", stdout);
  assert.equal(escaped.error.details.parameter, "q", stdout);
  const numbered = JSON.parse(revision);
  assert.equal(numbered.error.code, "INVALID_INPUT", stdout);
  assert.equal(numbered.error.details.parameter, "revision", stdout);
  const named = JSON.parse(twice);
  assert.equal(named.error.code, "INVALID_JSON", stdout);
  assert.deepEqual([named.error.details.reason, named.error.details.name], [
    "duplicate_name",
    "title",
  ], stdout);
  assert.equal(JSON.parse(mcpTwice).error.code, -32700, stdout);
  // Nothing refused was stored: the account has published nothing today.
  assert.equal(JSON.parse(me).posting_quota.used, 0, stdout);
});

Deno.test("curl: a compressed form is refused on the website's comment form and the OAuth token endpoint", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const { lines, stdout } = await curlScript(
    server.url,
    "curl-gzip-forms",
    false,
    `
FORM=(-H 'Content-Type: application/x-www-form-urlencoded' -H 'Content-Encoding: gzip')
printf 'text=hello&name=Ann' | gzip | curl -s -o /dev/null -w '%{http_code}\\n' "\${FORM[@]}" -X POST "$B/articles/$(python3 -c 'import uuid; print(uuid.uuid4())')/comments" --data-binary @-
printf 'grant_type=refresh_token&refresh_token=x&client_id=y' | gzip | curl -s "\${FORM[@]}" -X POST "$B/oauth/token" --data-binary @-; echo
`,
  );
  const [page, token] = lines;
  assert.equal(page, "415", stdout);
  const refused = JSON.parse(token);
  assert.equal(refused.error, "invalid_request", stdout);
  assert.match(refused.error_description, /uncompressed/, stdout);
});

Deno.test("curl: the operator's secrets in a post, a credential as a key, /mcp without its media types or in another charset", async () => {
  const moderatorKey = "curl-moderator-key-0123456789abcdef";
  await using board = await testBoard({ moderatorKey });
  await using server = serve(board);
  const { lines, stdout } = await curlScript(
    server.url,
    "curl-secrets",
    true,
    `
W=(-H "Authorization: Bearer $KEY")
curl -s "\${H[@]}" "\${W[@]}" -H "Idempotency-Key: curl-mod-$RANDOM$RANDOM$RANDOM" -X POST "$B/v1/posts" -d '{"title":"keys","body":"the key is ${moderatorKey}"}'; echo
curl -s "\${H[@]}" "\${W[@]}" -H "Idempotency-Key: $KEY" -X POST "$B/v1/posts" -d '{"title":"a title","body":"a body"}'; echo
BAD='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"not an object"}'
curl -s -o /dev/null -w '%{http_code}\\n' "\${W[@]}" -H 'Content-Type: application/json' -X POST "$B/mcp" -d "$BAD"
curl -s -o /dev/null -w '%{http_code}\\n' "\${W[@]}" -H 'Accept: application/json, text/event-stream' -H 'Content-Type: text/plain' -X POST "$B/mcp" -d "$BAD"
LIST='{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
curl -s -o /dev/null -w '%{http_code}\\n' "\${W[@]}" -H 'Accept: application/json, text/event-stream' -H 'Content-Type: application/json; charset=utf-16' -X POST "$B/mcp" -d "$LIST"
curl -s "\${H[@]}" "\${W[@]}" "$B/v1/me"; echo
`,
  );
  const [secret, keyAsKey, noAccept, plain, utf16, me] = lines;
  const refused = JSON.parse(secret).error;
  assert.deepEqual(
    [refused.code, refused.details.field],
    ["CREDENTIAL_IN_CONTENT", "body"],
    stdout,
  );
  const asKey = JSON.parse(keyAsKey).error;
  assert.deepEqual([asKey.code, asKey.details.reason], ["INVALID_INPUT", "credential"], stdout);
  assert.equal(noAccept, "406", stdout);
  assert.equal(plain, "415", stdout);
  assert.equal(utf16, "415", stdout);
  assert.equal(JSON.parse(me).posting_quota.used, 0, stdout);
});

/** Every entry of the store: its key and versionstamp (what a commit would change). */
async function storeSnapshot(kv: Deno.Kv): Promise<string[]> {
  const out: string[] = [];
  for await (const e of kv.list({ prefix: [] })) {
    out.push(`${JSON.stringify(e.key)}@${e.versionstamp}`);
  }
  return out;
}

Deno.test("curl: an article page read without a cookie writes nothing; the signed cookie it sets posts the form", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const article = await publishedArticle(board);
  const before = await storeSnapshot(board.kv);
  const jar = await Deno.makeTempFile();
  try {
    // A crawler's reads: no cookie kept, then one that keeps the cookie the page sets.
    const reads = await runTool("bash", [
      "-c",
      `set -euo pipefail
PAGE="$BOARD_URL/articles/${article.id}"
curl -s -o /dev/null -w '%{http_code}\\n' "$PAGE"
curl -s -o /dev/null -w '%{http_code}\\n' "$PAGE"
curl -s -c "${jar}" "$PAGE" | grep -o 'name="csrf" value="[^"]*"' | head -1 | sed 's/.*value="//; s/"$//' > "${jar}.csrf"
echo "cookies $(grep -c board_guest "${jar}")"`,
    ], { timeoutMs: TIMEOUT_MS, env: { BOARD_URL: server.url } });
    const stdout = toolOutput(reads);
    const lines = reads.stdout.trim().split("\n");
    assert.deepEqual(lines.slice(0, 3), ["200", "200", "cookies 1"], stdout);
    assert.deepEqual(await storeSnapshot(board.kv), before, "three page views wrote nothing");
    const csrf = (await Deno.readTextFile(`${jar}.csrf`)).trim();
    assert.ok(csrf, "the page carries the form");
    const posted = await runTool("curl", [
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code} %{redirect_url}",
      "-b",
      jar,
      "--data-urlencode",
      "text=A comment posted with curl and its cookie jar.",
      "--data-urlencode",
      "name=Curl Reader",
      "--data-urlencode",
      `csrf=${csrf}`,
      `${server.url}/articles/${article.id}/comments`,
    ], { timeoutMs: TIMEOUT_MS });
    assert.match(posted.stdout, /^303 .*[?&]posted=/, toolOutput(posted));
    assert.notDeepEqual(await storeSnapshot(board.kv), before, "the comment stored its session");
  } finally {
    await Deno.remove(jar).catch(() => {});
    await Deno.remove(`${jar}.csrf`).catch(() => {});
  }
});

Deno.test("curl: an SVG figure holding the moderator key or BOARD_SECRET is refused, as one holding an API key", async () => {
  const moderatorKey = "curl-svg-moderator-key-0123456789abcdef";
  await using board = await testBoard({ moderatorKey });
  await using server = serve(board);
  const secret = board.deps.config.secret!;
  const { lines, stdout } = await curlScript(
    server.url,
    "curl-svg-secrets",
    true,
    `
W=(-H "Authorization: Bearer $KEY")
for HELD in '${moderatorKey}' '${secret}' "$KEY" 'a plain title'; do
  SVG="<svg xmlns=\\"http://www.w3.org/2000/svg\\" width=\\"10\\" height=\\"10\\"><title>$HELD</title><rect width=\\"8\\" height=\\"8\\"/></svg>"
  curl -s "\${H[@]}" "\${W[@]}" -H "Idempotency-Key: curl-svg-$RANDOM$RANDOM$RANDOM" -X POST "$B/v1/articles/assets" \\
    --data-binary "{\\"svg\\":\\"\${SVG//\\"/\\\\\\"}\\"}"; echo
done
`,
  );
  const [moderator, boardSecret, apiKey, plain] = lines.map((l) => JSON.parse(l));
  for (const refused of [moderator, boardSecret, apiKey]) {
    assert.equal(refused.error?.code, "ARTICLE_CHECKS_FAILED", stdout);
    assert.deepEqual(
      refused.error.details.failures.map((f: { check: string }) => f.check),
      ["content"],
      stdout,
    );
  }
  assert.ok(plain.asset_id, stdout);
});
