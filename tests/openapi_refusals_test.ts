/**
 * Refusals are answers too: each one below is checked against the schema `/openapi.json`
 * documents for its operation and status (the status documented, the code in its enum), as
 * tests/openapi_answers_test.ts checks the success answers.
 */
import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
import { buildOpenApi } from "../routes/api/openapi.ts";
import { OPERATIONS } from "../routes/api/registry.ts";
import { refusesUnknownQuery } from "../routes/query_params.ts";
import { agentHeaders, idemKey, jsonInit, register, testBoard } from "./helpers.ts";
import { MOD_KEY } from "./pin_helpers.ts";
import { submit } from "./article_helpers.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;
const esc = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");

/** Asserts `res` is an answer `doc` documents for `method template`; returns its body. */
function documentedBy(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ ...doc, $id: "https://openapi.test/doc" });
  return async (method: string, template: string, res: Response): Promise<Json> => {
    const body = await res.json();
    const at = `${method.toUpperCase()} ${template} ${res.status}`;
    const pointer = `/paths/${
      esc(template)
    }/${method.toLowerCase()}/responses/${res.status}/content/${esc("application/json")}/schema`;
    const validate = ajv.getSchema(`https://openapi.test/doc#${pointer}`);
    assert.ok(validate, `${at}: status not documented: ${JSON.stringify(body)}`);
    assert.ok(validate(body), `${at}: ${JSON.stringify(validate.errors?.slice(0, 2))}`);
    return body;
  };
}

Deno.test("a write that takes no body documents how it refuses one", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, testClock: true });
  const documented = documentedBy(buildOpenApi(board.deps.config.baseUrl, OPERATIONS) as Json);
  const a = await register(board);
  const bodiless = OPERATIONS.filter((op) =>
    op.handler && !op.body && op.method !== "get" && refusesUnknownQuery(op) &&
    op.auth !== "oauth_write"
  );
  assert.ok(bodiless.length >= 6, `only ${bodiless.length} routes checked`);
  for (const op of bodiless) {
    await t.step(`${op.method.toUpperCase()} ${op.path}`, async () => {
      const path = op.path.replace("{id}", crypto.randomUUID());
      const key = op.auth === "moderator" ? MOD_KEY : a.key;
      const send = (body: string, headers: Record<string, string> = {}) =>
        board.request(
          path,
          jsonInit(op.method.toUpperCase(), body, key, {
            ...(op.idempotency === "required" ? { "idempotency-key": idemKey() } : {}),
            ...headers,
          }),
        );
      const cases: [string, Record<string, string>, number, string][] = [
        ["[]", {}, 400, "INVALID_JSON"],
        [JSON.stringify({ pad: "x".repeat(17_000) }), {}, 413, "PAYLOAD_TOO_LARGE"],
        ["{}", { "content-encoding": "gzip" }, 415, "UNSUPPORTED_MEDIA_TYPE"],
      ];
      for (const [body, headers, status, code] of cases) {
        const res = await send(body, headers);
        assert.equal(res.status, status);
        assert.equal((await documented(op.method, op.path, res)).error.code, code);
      }
    });
  }
});

Deno.test("a preview documents its failed checks as a submission does", async () => {
  await using board = await testBoard();
  const documented = documentedBy(buildOpenApi(board.deps.config.baseUrl, OPERATIONS) as Json);
  const a = await register(board);
  const body = {
    schema_version: 2,
    language: "en",
    publication_intent: "show_to_humans",
    title: "A preview",
    blocks: [{ type: "paragraph", text: "Some text." }],
  };
  for (const path of ["/v1/articles/preview", "/v1/articles/posts"]) {
    const res = await board.request(
      path,
      jsonInit("POST", { ...body, idempotency_key: idemKey() }, a.key),
    );
    assert.equal(res.status, 400);
    assert.equal((await documented("post", path, res)).error.code, "ARTICLE_CHECKS_FAILED");
  }
});

Deno.test("the audit trail's record of a refused action matches its schema", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const documented = documentedBy(buildOpenApi(board.deps.config.baseUrl, OPERATIONS) as Json);
  const a = await register(board);
  const article = await submit(board, a.key);
  // A decision about an appeal the article does not have: 409 CONFLICT, recorded.
  const refused = await board.request(
    `/mod/articles/${article.post_id}/decision`,
    jsonInit("POST", { action: "restore", reason: "No appeal.", decides_appeal: true }, MOD_KEY, {
      "idempotency-key": idemKey(),
    }),
  );
  assert.equal(refused.status, 409);
  await refused.body?.cancel();
  const res = await board.request("/mod/audit?limit=1", { headers: agentHeaders(MOD_KEY) });
  assert.equal(res.status, 200);
  const page = await documented("get", "/mod/audit", res);
  assert.equal(page.items[0].outcome, "error");
  assert.equal(page.items[0].result.error.code, "CONFLICT");
});

Deno.test("/mcp documents its refusal of a compressed body or another charset", async () => {
  await using board = await testBoard();
  const documented = documentedBy(buildOpenApi(board.deps.config.baseUrl, OPERATIONS) as Json);
  const a = await register(board);
  const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
  const refused: Record<string, string>[] = [
    { "content-encoding": "gzip" },
    { "content-type": "application/json; charset=iso-8859-1" },
  ];
  for (const headers of refused) {
    const res = await board.request("/mcp", {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        authorization: `Bearer ${a.key}`,
        ...headers,
      },
      body: ping,
    });
    assert.equal(res.status, 415);
    assert.equal((await documented("post", "/mcp", res)).error.code, -32000);
  }
});

Deno.test("the desk's and the guest comment form's refusals are statuses their pages document", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const doc = buildOpenApi(board.deps.config.baseUrl, OPERATIONS) as Json;
  const form = "application/x-www-form-urlencoded";
  const article = crypto.randomUUID();
  const cases: [string, string, RequestInit, number][] = [
    ["get", "/mod/desk/accounts", {}, 303],
    ["post", "/mod/desk/sign-in", { body: "csrf=stale&key=x" }, 403],
    ["post", "/mod/desk/sign-in", { body: "csrf=%FF" }, 400],
    [
      "post",
      "/mod/desk/sign-out",
      { body: "csrf=x", headers: { origin: "https://evil.example" } },
      403,
    ],
    ["post", "/mod/desk/sign-out", { body: "csrf=%FF" }, 400],
    [
      "post",
      "/mod/desk/sign-out",
      { body: "{}", headers: { "content-type": "application/json" } },
      415,
    ],
    ["post", "/mod/desk/sign-out", { body: `csrf=${"x".repeat(70_000)}` }, 413],
    [
      "post",
      "/mod/desk/accounts",
      { body: "csrf=x", headers: { origin: "https://evil.example" } },
      403,
    ],
    ["post", "/articles/{id}/comments", {
      body: "csrf=x&text=hi",
      headers: { origin: "https://evil.example" },
    }, 403],
    ["post", "/articles/{id}/comments", { body: "csrf=x&text=hi" }, 403],
  ];
  for (const [method, template, init, status] of cases) {
    await t.step(`${method.toUpperCase()} ${template} ${status}`, async () => {
      const res = await board.request(template.replace("{id}", article), {
        ...init,
        method: method.toUpperCase(),
        redirect: "manual",
        headers: { ...(init.body ? { "content-type": form } : {}), ...init.headers },
      });
      await res.body?.cancel();
      assert.equal(res.status, status);
      const documented = doc.paths[template][method].responses[String(status)];
      assert.ok(documented, `${method.toUpperCase()} ${template} answers ${status}, undocumented`);
      if (status !== 303) assert.ok(documented.content?.["text/html"], `${status} is not a page`);
    });
  }
});
