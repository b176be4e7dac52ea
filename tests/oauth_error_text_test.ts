/**
 * OAuth error answers say `error_description` in the characters RFC 6749 §5.2 allows
 * (printable ASCII without `"` and `\`), in the JSON body and in the `WWW-Authenticate`
 * challenge alike, while still naming what was wrong.
 */
import assert from "node:assert/strict";
import { testBoard } from "./helpers.ts";
import { registerRequest, tokenRequest } from "./oauth_helpers.ts";

/** RFC 6749 §5.2: error_description = *( %x20-21 / %x23-5B / %x5D-7E ). */
const ALLOWED = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

Deno.test("OAuth error descriptions keep to RFC 6749's characters and still name the fault", async () => {
  await using board = await testBoard();
  const answers: [string, Response][] = [
    ["token without client_id", await tokenRequest(board, { grant_type: "refresh_token" })],
    ["token with an unknown grant", await tokenRequest(board, { grant_type: "password" })],
    [
      "a registration with a bad redirect URI",
      await registerRequest(board, { redirect_uris: ['http://example.com/"quoted"\\path'] }),
    ],
    [
      "/mcp with an unknown token",
      await board.request("/mcp", {
        method: "POST",
        headers: {
          authorization: `Bearer pb_at_${"x".repeat(43)}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      }),
    ],
  ];
  for (const [what, res] of answers) {
    const body = await res.json();
    assert.ok(res.status >= 400, `${what}: ${res.status}`);
    assert.equal(typeof body.error, "string", what);
    assert.match(body.error_description, ALLOWED, `${what}: ${body.error_description}`);
    const challenge = res.headers.get("www-authenticate");
    const said = challenge?.match(/error_description="([^"]*)"/)?.[1];
    if (said !== undefined) assert.match(said, ALLOWED, `${what}: ${challenge}`);
  }
  const missing = await (await tokenRequest(board, { grant_type: "refresh_token" })).json();
  assert.equal(missing.error_description, "Parameter 'client_id' is required.");
});
