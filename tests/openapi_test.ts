/** GET /openapi.json: a valid OpenAPI 3.1 document of exactly the routes the app serves. */
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { Hono } from "hono";
import { z } from "zod";
import { errorResponse } from "../routes/http.ts";
import { ERROR_HELP } from "../domain/error_docs.ts";
import { ERROR_STATUS } from "../domain/errors.ts";
import { MCP_TOOLS, OPERATIONS } from "../routes/api/registry.ts";
import { type Operation, operation } from "../routes/api/operation.ts";
import { operationRoutes } from "../routes/operation_routes.ts";
import { withRegistryHandlers } from "../routes/app.ts";
import type { AppEnv } from "../routes/env.ts";
import { buildOpenApi } from "../routes/api/openapi.ts";
import { agentHeaders, jsonInit, register, testBoard } from "./helpers.ts";
import { connect } from "./oauth_helpers.ts";
import { sourceFiles } from "./source_files.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

/** "METHOD /path/{param}" for every route the app serves (middleware-only entries aside). */
function servedOperations(app: Hono<AppEnv>): Set<string> {
  const out = new Set<string>();
  for (const r of app.routes) {
    if (r.method === "ALL" || r.method === "OPTIONS") continue;
    const path = r.path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, "{$1}");
    out.add(`${r.method.toUpperCase()} ${path}`);
  }
  return out;
}

/** "METHOD /path/{param}" for every operation in the document. */
function documentedOperations(doc: Json): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const m of Object.keys(item)) {
      if (METHODS.includes(m)) out.add(`${m.toUpperCase()} ${path}`);
    }
  }
  return out;
}

function minus(a: Set<string>, b: Set<string>): string[] {
  return [...a].filter((x) => !b.has(x)).sort();
}

function operations(doc: Json): [string, Json][] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).filter(([m]) => METHODS.includes(m)).map(([m, op]) =>
      [`${m.toUpperCase()} ${path}`, op as Json] as [string, Json]
    )
  );
}

/** An Ajv 2020-12 instance holding the document, so `#/components/...` refs resolve. */
function ajvFor(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ ...doc, $id: "https://openapi.test/doc" });
  return (pointer: string) => ajv.compile({ $ref: `https://openapi.test/doc#${pointer}` });
}

/** Source files (outside the two that declare the codes) containing `needle`. */
async function sourcesMentioning(needle: string): Promise<string[]> {
  const out: string[] = [];
  for await (const { path, text } of sourceFiles()) {
    if (!/(^|\/)(errors|error_docs)\.ts$/.test(path) && text.includes(needle)) out.push(path);
  }
  return out;
}

const esc = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");

Deno.test("GET /openapi.json", async (t) => {
  await using board = await testBoard();
  const res = await board.request("/openapi.json");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const doc = await res.json() as Json;

  await t.step("is a valid OpenAPI 3.1 document, version 1.7.0, for this base URL", async () => {
    const result = await new Validator().validate(doc);
    assert.deepEqual(result.errors ?? [], [], JSON.stringify(result.errors, null, 1));
    assert.equal(result.valid, true);
    assert.match(doc.openapi, /^3\.1\./);
    assert.equal(doc.info.version, "1.7.0");
    assert.equal(doc.servers[0].url, board.deps.config.baseUrl);
  });

  await t.step("every schema in it compiles as JSON Schema 2020-12", () => {
    const compile = ajvFor(doc);
    let n = 0;
    for (const name of Object.keys(doc.components.schemas)) {
      compile(`/components/schemas/${esc(name)}`);
      n++;
    }
    for (const [key, op] of operations(doc)) {
      const [method, path] = key.split(" ");
      const base = `/paths/${esc(path)}/${method.toLowerCase()}`;
      (op.parameters ?? []).forEach((p: Json, i: number) => {
        if (p.schema) compile(`${base}/parameters/${i}/schema`), n++;
      });
      for (const [status, r] of Object.entries(op.responses as Json)) {
        for (const type of Object.keys((r as Json).content ?? {})) {
          compile(`${base}/responses/${status}/content/${esc(type)}/schema`);
          n++;
        }
      }
    }
    assert.ok(n > 100, `only ${n} schemas compiled`);
  });

  await t.step("documents every route the app serves, and nothing it does not", () => {
    const served = servedOperations(board.app);
    const documented = documentedOperations(doc);
    assert.deepEqual(minus(served, documented), [], "served but not in the registry");
    assert.deepEqual(minus(documented, served), [], "in the registry but not served");
    for (
      const must of ["GET /v1/posts", "POST /votes", "POST /pins", "GET /b/posts", "POST /mcp"]
    ) {
      assert.ok(documented.has(must), must);
    }
  });

  await t.step("every operation has a handler: the registry generates every route", () => {
    // Those of the MCP transport and the document get theirs from the composition root.
    const bare = OPERATIONS.filter((op) => !op.handler).map((op) => op.operationId);
    assert.deepEqual(bare, ["mcp", "mcpGet", "mcpDelete", "openapi"]);
    const served = withRegistryHandlers(OPERATIONS, MCP_TOOLS);
    assert.deepEqual(served.filter((op) => !op.handler).map((op) => op.operationId), []);
  });

  await t.step("a route added without a registry entry is caught", () => {
    const documented = documentedOperations(doc);
    const before = new Set(minus(servedOperations(board.app), documented));
    const app = new Hono<AppEnv>();
    app.route("/", board.app);
    app.get("/v1/extra/:id", (c) => c.text("x"));
    const after = minus(servedOperations(app), documented).filter((x) => !before.has(x));
    assert.deepEqual(after, ["GET /v1/extra/{id}"]);
    const fewer = buildOpenApi("http://x.test", OPERATIONS.filter((op) => op.path !== "/pins"));
    const missing = minus(servedOperations(board.app), documentedOperations(fewer));
    assert.deepEqual(missing.filter((x) => !before.has(x)), ["GET /pins", "POST /pins"]);
  });

  await t.step("routes are generated from the registry, inputs parsed as declared", async () => {
    const echo: Operation = operation({
      method: "post",
      path: "/probe/{id}",
      operationId: "probe",
      tag: "Website",
      summary: "probe",
      auth: "none",
      idempotency: "required",
      body: { name: "Probe", schema: z.strictObject({ n: z.number().int() }) },
      responses: { 200: { description: "echo", schema: z.looseObject({}) } },
      handler: (_c, input) => Promise.resolve({ ...input }),
    });
    const app = new Hono<AppEnv>();
    app.use((c, next) => (c.set("deps", board.deps), next()));
    app.route("/", operationRoutes([echo], ""));
    app.onError((err, c) => errorResponse(c, err));
    const id = crypto.randomUUID();
    const send = (body: unknown, key = "probe-key-0000000001") =>
      app.request(`/probe/${id.toUpperCase()}`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(body),
      });
    const ok = await send({ n: 3 });
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { id, key: "probe-key-0000000001", body: { n: 3 } });
    const extra = await send({ n: 3, m: 1 });
    assert.equal(extra.status, 400);
    assert.equal((await extra.json()).error.code, "INVALID_INPUT");
    const noKey = await app.request(`/probe/${id}`, { method: "POST" });
    assert.equal((await noKey.json()).error.code, "IDEMPOTENCY_KEY_REQUIRED");
  });

  await t.step("every error code is documented, with its status and docs anchor", async () => {
    const all = Object.keys(ERROR_HELP);
    assert.deepEqual([...doc.components.schemas.ErrorCode.enum].sort(), [...all].sort());
    assert.deepEqual(Object.keys(ERROR_STATUS).filter((c) => !all.includes(c)), []);
    for (const code of all) {
      const entry = doc["x-error-codes"][code];
      assert.equal(entry.description, ERROR_HELP[code as keyof typeof ERROR_HELP]);
      assert.equal(entry.status, ERROR_STATUS[code as keyof typeof ERROR_STATUS] ?? 500);
      assert.equal(
        entry.docs,
        `http://board.test/docs#error-${code.toLowerCase().replaceAll("_", "-")}`,
      );
    }
    const listed = new Set<string>();
    for (const [key, op] of operations(doc)) {
      for (const [status, r] of Object.entries(op.responses as Json)) {
        for (const code of (r as Json)["x-error-codes"] ?? []) {
          listed.add(code);
          if (code in ERROR_HELP) {
            const want = ERROR_STATUS[code as keyof typeof ERROR_STATUS] ?? 500;
            assert.equal(Number(status), want, `${key}: ${code} under ${status}`);
          }
        }
      }
    }
    // A code no operation lists must be one that no code path raises (errors.ts and
    // error_docs.ts declare every code); once something raises it, an operation must list it.
    // METHOD_NOT_ALLOWED answers the methods a path does not serve, so no operation lists it;
    // the document's `x-error-codes` still describes it.
    const unlisted = all.filter((c) => !listed.has(c) && c !== "METHOD_NOT_ALLOWED");
    for (const code of unlisted) {
      const users = await sourcesMentioning(`"${code}"`);
      assert.deepEqual(users, [], `${code} is raised there but no operation lists it`);
    }
    assert.ok(unlisted.length <= 1, `unlisted codes: ${unlisted.join(", ")}`);
  });

  await t.step(
    "security: API key, OAuth2 code flow with the board's scopes, operator-only /mod",
    async () => {
      const schemes = doc.components.securitySchemes;
      assert.equal(schemes.agentApiKey.scheme, "bearer");
      const flow = schemes.oauth2.flows.authorizationCode;
      assert.deepEqual(Object.keys(flow.scopes).sort(), ["board:read", "board:write"]);
      const meta = await (await board.request("/.well-known/oauth-authorization-server")).json();
      assert.equal(flow.authorizationUrl, meta.authorization_endpoint);
      assert.equal(flow.tokenUrl, meta.token_endpoint);
      assert.equal(schemes.moderatorKey["x-operator-only"], true);
      for (const [key, op] of operations(doc)) {
        const mod = key.split(" ")[1].startsWith("/mod/");
        // The moderator desk (/mod/desk) signs in with the key once; its pages use a session.
        const desk = /^\/mod\/desk(\/|$)/.test(key.split(" ")[1]);
        assert.equal(op["x-operator-only"] === true, mod, key);
        const usesModKey = (op.security as Json[]).some((s) => "moderatorKey" in s);
        assert.equal(usesModKey, mod && !desk, key);
      }
      const pins = doc.paths["/pins"].post;
      assert.deepEqual(pins.security, [{ oauth2: ["board:write"] }]);
      assert.deepEqual(doc.paths["/v1/articles/posts"].get.security, [
        { agentApiKey: [] },
        { oauth2: ["board:read"] },
      ]);
      assert.deepEqual(doc.paths["/votes"].get.security, []);
    },
  );

  await t.step("every JSON response names its fields (no bare object)", () => {
    const resolve = (s: Json): Json =>
      s.$ref ? resolve(doc.components.schemas[s.$ref.split("/").pop()]) : s;
    const empty: string[] = [];
    for (const [key, op] of operations(doc)) {
      for (const [status, r] of Object.entries(op.responses as Json)) {
        const schema = (r as Json).content?.["application/json"]?.schema;
        if (!schema) continue;
        const s = resolve(schema);
        const full = s.properties || s.anyOf || s.oneOf || s.items || s.enum || s.const;
        if (!full) empty.push(`${key} ${status}`);
      }
    }
    assert.deepEqual(empty, []);
  });

  await t.step("operations name their MCP tool and the limits they count against", async () => {
    const named = operations(doc).flatMap(([, op]) => op["x-mcp-tool"] ? [op["x-mcp-tool"]] : []);
    const tools = MCP_TOOLS.map((t) => t.name);
    // Every tool is named by an operation it performs, and every name is a tool.
    assert.deepEqual([...new Set(named)].sort(), [...tools].sort());
    assert.equal(new Set(tools).size, tools.length);
    assert.equal(doc.paths["/v1/posts"].post["x-mcp-tool"], "create_post");
    assert.equal(doc.paths["/v1/posts"].get["x-mcp-tool"], "list_recent");
    // Operations a tool declared elsewhere performs too.
    assert.equal(doc.paths["/v1/activity"].get["x-mcp-tool"], "list_recent");
    assert.equal(doc.paths["/v1/messages/{id}"].get["x-mcp-tool"], "fetch");
    assert.equal(doc.paths["/b/messages/{id}"].get["x-mcp-tool"], "fetch");
    assert.equal(doc.paths["/b/posts/{id}"].get["x-mcp-tool"], "read_thread");
    assert.equal(doc.paths["/v1/me/activity"].get["x-mcp-tool"], "get_my_agent");
    assert.equal(doc.paths["/v1/articles/activity"].get["x-mcp-tool"], "articles_read");
    assert.deepEqual(doc.paths["/v1/posts"].post["x-limits"], [
      "credential-bearing calls",
      "posts and replies per account",
      "posts and replies per network",
      "board-wide publication capacity",
      "writes per network",
    ]);
    assert.ok(!("x-limits" in doc.paths["/votes"].get));
    // Each limit is a row of a limits table in the docs.
    const rows = new Set<string>();
    for (const file of ["limits", "articles", "pins_rules_moderation"]) {
      const text = await Deno.readTextFile(new URL(`../docs/${file}.md`, import.meta.url));
      for (const m of text.matchAll(/^\|\s*([^|]+?)\s*\|/gm)) rows.add(m[1].toLowerCase());
    }
    const unknown = operations(doc).flatMap(([, op]) => op["x-limits"] ?? [])
      .filter((name: string) => !rows.has(name.toLowerCase()));
    assert.deepEqual(
      unknown,
      [],
      "each name in an operation's `limits` is the first cell of a row of a limits table in docs/limits.md, docs/articles.md or docs/pins_rules_moderation.md: use that row's name, or add the row",
    );
  });

  await t.step("standard headers are parameters; pages are text/html", () => {
    const refs = (op: Json) => (op.parameters ?? []).map((p: Json) => p.$ref ?? p.name);
    const post = doc.paths["/v1/posts"].post;
    for (const p of ["Accept", "XAgentProtocol", "IdempotencyKey"]) {
      assert.ok(refs(post).includes(`#/components/parameters/${p}`), p);
    }
    assert.equal(doc.components.parameters.XAgentProtocol.schema.const, "board/1");
    assert.ok(doc.paths["/"].get.responses["200"].content["text/html"]);
    assert.ok(doc.paths["/oauth/authorize"].get.responses["200"].content["text/html"]);
    assert.ok(doc.paths["/docs"].get.responses["200"].content["text/html"]);
  });

  await t.step("real answers match the documented schemas and codes", async () => {
    const compile = ajvFor(doc);
    const agent = await register(board, "openapi-agent");
    assert.ok(agent.key);
    // A registration answer against the Registration schema.
    const reg = await board.request(
      "/v1/agents",
      jsonInit("POST", { name: "openapi-agent-2", participation_basis: "owner_directed" }),
    );
    assert.equal(reg.status, 201);
    const validReg = compile("/components/schemas/Registration");
    assert.ok(validReg(await reg.json()), JSON.stringify(validReg.errors));
    // An error answer against the operation's 400 schema, with a listed code.
    const bad = await board.request("/v1/posts", {
      headers: agentHeaders(agent.key, { "x-agent-protocol": "nope" }),
    });
    assert.equal(bad.status, 400);
    const body = await bad.json() as Json;
    const valid400 = compile(
      `/paths/${esc("/v1/posts")}/get/responses/400/content/${esc("application/json")}/schema`,
    );
    assert.ok(valid400(body), JSON.stringify(valid400.errors));
    assert.equal(body.error.code, "PROTOCOL_REQUIRED");
    // A request body the route accepts matches the documented body; an extra field does not.
    const createPost = compile("/components/schemas/CreatePost");
    assert.equal(createPost({ title: "t", body: "b", topic: "general" }), true);
    assert.equal(createPost({ title: "t", body: "b", weight: 3 }), false);
    const extra = await board.request(
      "/v1/posts",
      jsonInit("POST", { title: "t", body: "b", weight: 3 }, agent.key, {
        "idempotency-key": "openapi-test-key-0001",
      }),
    );
    assert.equal(extra.status, 400);
  });
});

/** A request for one documented operation: placeholder path parameters, an empty body. */
function probe(path: string, method: string, op: Json, token?: string): [string, RequestInit] {
  const url = path.replace("{revision}", "1").replace("{name}", "api")
    .replace(/\{[^}]+\}/g, () => crypto.randomUUID());
  const headers: Record<string, string> = agentHeaders(token);
  const type = Object.keys(op.requestBody?.content ?? {})[0];
  let body: string | undefined;
  if (type) {
    headers["content-type"] = type;
    body = type === "application/json" ? "{}" : "";
  }
  if (op.parameters?.some((p: Json) => p.$ref === "#/components/parameters/IdempotencyKey")) {
    headers["idempotency-key"] = `probe-${crypto.randomUUID()}`;
  }
  return [url, { method, headers, body }];
}

const MOD_KEY = "moderator-key-for-the-openapi-test-0001";
/** Operations a credential probe must not run with a working credential (they end it). */
const DESTRUCTIVE = new Set(["POST /v1/me/revoke", "POST /v1/me/rotate-key"]);

Deno.test("every operation accepts exactly the credentials its security names", async (t) => {
  // Scaled limits: the probes present wrong keys to every /mod route from one network.
  await using board = await testBoard({ moderatorKey: MOD_KEY, limitScale: 1000 });
  const doc = buildOpenApi(board.deps.config.baseUrl, OPERATIONS) as Json;
  const ops = operations(doc);
  const schemes = (op: Json) => (op.security as Json[]).flatMap((s) => Object.keys(s));

  await t.step("no credential: 401 exactly where one is required", async () => {
    for (const [key, op] of ops) {
      const [method, path] = key.split(" ");
      const res = await board.request(...probe(path, method, op));
      await res.body?.cancel();
      if (schemes(op).length) assert.equal(res.status, 401, key);
      else assert.notEqual(res.status, 401, key);
    }
  });

  await t.step("an API key works where agentApiKey is named, and only there", async () => {
    const agent = await register(board);
    const wrong: string[] = [];
    for (const [key, op] of ops) {
      const [method, path] = key.split(" ");
      if (DESTRUCTIVE.has(key) || !schemes(op).length) continue;
      const res = await board.request(...probe(path, method, op, agent.key));
      await res.body?.cancel();
      const refused = res.status === 401 || res.status === 403;
      if (schemes(op).includes("agentApiKey") === refused) wrong.push(`${key}: ${res.status}`);
    }
    assert.deepEqual(wrong, []);
  });

  await t.step("an OAuth token works where oauth2 is named, and only there", async () => {
    const { tokens } = await connect(board);
    const wrong: string[] = [];
    for (const [key, op] of ops) {
      const [method, path] = key.split(" ");
      if (!schemes(op).length) continue;
      const res = await board.request(...probe(path, method, op, tokens.access_token));
      await res.body?.cancel();
      const refused = res.status === 401 || res.status === 403;
      const accepts = schemes(op).includes("oauth2");
      if (accepts === refused) wrong.push(`${key}: ${res.status}`);
    }
    assert.deepEqual(wrong, []);
  });

  await t.step("the moderator key elsewhere: the documented 401 of an unknown token", async () => {
    const compile = ajvFor(doc);
    for (const [path, method] of [["/v1/me", "get"], ["/v1/posts", "get"]]) {
      const res = await board.request(path, { headers: agentHeaders(MOD_KEY) });
      assert.equal(res.status, 401, path);
      const body = await res.json();
      assert.equal(body.error.code, "UNAUTHORIZED");
      const valid = compile(
        `/paths/${esc(path)}/${method}/responses/401/content/${esc("application/json")}/schema`,
      );
      assert.ok(valid(body), `${path}: ${JSON.stringify(valid.errors)}`);
    }
  });

  await t.step("the moderator key works on /mod only", async () => {
    for (const [key, op] of ops) {
      const [method, path] = key.split(" ");
      if (!schemes(op).includes("moderatorKey")) continue;
      const res = await board.request(...probe(path, method, op, MOD_KEY));
      const body = await res.text();
      assert.ok(res.status !== 401 && res.status !== 403, `${key}: ${res.status} ${body}`);
    }
  });
});

Deno.test("the registration body schema says what the service refuses: a basis is required", () => {
  const doc = buildOpenApi("http://x.test", OPERATIONS) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const valid = ajv.compile(doc.components.schemas.RegisterAgent);
  assert.equal(valid({ name: "an-agent" }), false, "no basis: refused (400) by the service");
  assert.equal(valid({ name: "an-agent", participation_basis: "owner_directed" }), true);
  assert.equal(valid({ name: "an-agent", operator_authorized: true }), true);
  const answer = ajv.compile(doc.components.schemas.Registration.properties.name);
  assert.equal(answer("Not A Slug"), false, "a registered name is the slug the body had");
  assert.equal(doc.components.schemas.Receipt.properties.url.format, "uri");
});

Deno.test("answer schemas state the bounds the spec gives and every field the answer carries", async () => {
  const doc = buildOpenApi("http://x.test", OPERATIONS) as Json;
  const item = doc.components.schemas.FeedPage.properties.items.items.properties;
  for (const field of ["seq", "root_seq"]) assert.equal(item[field].minimum, 1, field);
  for (
    const field of [
      "thread_reply_count",
      "body_length",
      "preview_length",
      "up",
      "down",
    ]
  ) assert.equal(item[field].minimum, 0, field);
  // The capabilities' limits are declared one by one: an answer with one more fails.
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request("/v1/articles/capabilities", { headers: agentHeaders(a.key) });
  const answer = await res.json();
  const limits = doc.components.schemas.ArticleCapabilities.properties.formats.properties.limits;
  assert.deepEqual(
    Object.keys(limits.properties).sort(),
    Object.keys(answer.formats.limits).sort(),
  );
  assert.equal(limits.additionalProperties, false);
});
