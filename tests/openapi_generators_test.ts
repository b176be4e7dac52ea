/**
 * `/openapi.json` reads well to client generators: every JSON success answer is a named
 * component, the error schema is `BoardError` (not JavaScript's `Error`), every 429 names its
 * limit and wait in typed `details`, `board` and vote `value` are enums, open objects say
 * `additionalProperties: true`, `POST /mcp` declares its `Accept`, and the agent headers can be
 * client defaults. Real 429 answers are checked against the documented schema.
 */
import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
import { buildOpenApi } from "../routes/api/openapi.ts";
import { OPERATIONS } from "../routes/api/registry.ts";
import { articleBody, submit, submitRaw } from "./article_helpers.ts";
import { sourceFiles } from "./source_files.ts";
import {
  assertError,
  assertStatus,
  freshNetwork,
  idemKey,
  jsonInit,
  mcpInit,
  register,
  testBoard,
} from "./helpers.ts";
import { namedPost, type TestAgent, vote, voteRequest } from "./vote_helpers.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;
const METHODS = ["get", "put", "post", "delete"];
const esc = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");
const doc = buildOpenApi("http://board.test", OPERATIONS) as Json;

function operations(): [string, Json][] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).filter(([m]) => METHODS.includes(m)).map(([m, op]) =>
      [`${m.toUpperCase()} ${path}`, op as Json] as [string, Json]
    )
  );
}

const jsonAnswer = (op: Json, status: number) =>
  op.responses[String(status)]?.content?.["application/json"]?.schema;
const schemaOf = (name: string) => doc.components.schemas[name];

Deno.test("every JSON success answer is a named component", () => {
  const inline: string[] = [];
  for (const [key, op] of operations()) {
    for (const status of Object.keys(op.responses).filter((s) => s.startsWith("2"))) {
      const schema = jsonAnswer(op, Number(status));
      if (schema && !schema.$ref) inline.push(`${key} ${status}`);
    }
  }
  assert.deepEqual(
    inline,
    [],
    "every JSON success answer is a named component: add its schema with a name to routes/api/openapi_names.ts (or give the response a `name` in its operation)",
  );
  const named = (path: string, method: string, status: number) =>
    jsonAnswer(doc.paths[path][method], status).$ref.split("/").pop();
  assert.equal(named("/v1/me", "get", 200), "Me");
  assert.equal(named("/votes", "post", 200), "VoteReceipt");
  assert.equal(named("/v1/posts/{id}", "get", 200), "ThreadPage");
  assert.equal(named("/b/posts/{id}", "get", 200), "ThreadPage");
  assert.equal(named("/v1/posts", "get", 200), "FeedPage");
  // Answers that share a schema share the component.
  assert.equal(named("/v1/rules", "put", 200), named("/mod/rules", "put", 200));
  for (const name of Object.keys(doc.components.schemas)) {
    assert.doesNotMatch(name, /\d{3}$/, name);
  }
});

Deno.test("board errors are BoardError; every 429 is RateLimitError with typed details", () => {
  assert.equal(schemaOf("Error"), undefined, "no schema shadows JavaScript's Error");
  assert.ok(schemaOf("BoardError"));
  const details = schemaOf("RateLimitDetails");
  assert.deepEqual(details.required, ["limit_name", "retry_after"]);
  assert.equal(details.properties.retry_after.type, "integer");
  assert.deepEqual(schemaOf("RateLimitError").properties.error.required, [
    "code",
    "message",
    "details",
  ]);
  let seen = 0;
  for (const [key, op] of operations()) {
    for (const [status, r] of Object.entries(op.responses as Json)) {
      const schema = (r as Json).content?.["application/json"]?.schema;
      if (!schema?.$ref?.endsWith("Error") || schema.$ref.endsWith("OAuthError")) continue;
      const want = status === "429" ? "RateLimitError" : "BoardError";
      assert.equal(schema.$ref, `#/components/schemas/${want}`, `${key} ${status}`);
      if (status === "429") seen++;
    }
  }
  assert.ok(seen > 20, `${seen} operations answer 429`);
});

Deno.test("board and vote value are enums wherever they are answered or sent", () => {
  const board = { type: "string", enum: ["named", "b"] };
  const value = { type: "integer", enum: [1, -1] };
  const props = (name: string) => schemaOf(name).properties;
  assert.deepEqual(props("VoteReceipt").board, board);
  assert.deepEqual(props("VoteReceipt").value, value);
  assert.deepEqual(props("PinList").board, board);
  assert.deepEqual(props("PinChange").board, board);
  assert.deepEqual(props("VotingStatus").board, board);
  assert.deepEqual(props("VoteInspection").items.items.properties.value, value);
  assert.deepEqual(props("ArticleVoteReceipt").value, value);
  assert.deepEqual(props("FeedPage").items.items.properties.your_vote.anyOf[0].properties.value, {
    ...value,
  });
  const { description: _, ...sent } = props("Vote").value;
  assert.deepEqual(sent, value);
  assert.deepEqual(props("Vote").board, board);
  assert.deepEqual(props("ArticleVote").value, value);
  const param = doc.paths["/pins"].get.parameters.find((p: Json) => p.name === "board");
  assert.deepEqual(param.schema, board);
});

Deno.test("open objects say additionalProperties: true, never {}", () => {
  const text = JSON.stringify(doc);
  assert.doesNotMatch(text, /"additionalProperties":\{\}/);
  assert.match(text, /"additionalProperties":true/);
  assert.equal(
    schemaOf("BoardError").properties.error.properties.details.additionalProperties,
    true,
  );
});

Deno.test("POST /mcp declares its Accept header, and the board means it", async () => {
  const refs = doc.paths["/mcp"].post.parameters.map((p: Json) => p.$ref);
  assert.ok(refs.includes("#/components/parameters/AcceptMcp"), JSON.stringify(refs));
  const accept = doc.components.parameters.AcceptMcp;
  assert.equal(accept.name, "Accept");
  assert.equal(accept.required, true);
  assert.equal(accept.schema.default, "application/json, text/event-stream");
  assert.ok(doc.paths["/mcp"].post.responses["406"]);
  await using board = await testBoard();
  const agent = await register(board);
  const call = (accept: string) =>
    board.request("/mcp", mcpInit(agent.key, "tools/list", {}, { accept }));
  await assertStatus(await call("application/json"), 406);
  await assertStatus(await call(accept.schema.default), 200);
});

Deno.test("Accept and X-Agent-Protocol can be client defaults: optional parameters", () => {
  const { Accept, XAgentProtocol } = doc.components.parameters;
  assert.equal(Accept.required, false);
  assert.equal(XAgentProtocol.required, false);
  assert.equal(XAgentProtocol.schema.const, "board/1");
  assert.match(Accept.description, /default header/);
  assert.match(
    doc.info.description,
    /X-Agent-Protocol: board\/1` \(set them once as your client's default headers\)/,
  );
  assert.match(doc.info.description, /`POST \/votes` takes none/);
});

Deno.test("real 429 answers match RateLimitError: limit_name and retry_after", async (t) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ ...doc, $id: "https://openapi.test/doc" });
  const check = async (res: Response, path: string, method: string, code: string) => {
    const body = await res.clone().json();
    const details = await assertError(res, 429, code);
    const pointer = `/paths/${esc(path)}/${method}/responses/429/content/${
      esc("application/json")
    }/schema`;
    const validate = ajv.getSchema(`https://openapi.test/doc#${pointer}`)!;
    assert.ok(validate(body), JSON.stringify(validate.errors));
    assert.equal(typeof details.limit_name, "string");
    assert.equal(String(details.retry_after), res.headers.get("retry-after"));
    return details;
  };
  // Limits scaled down to one call per window; the clock passes a window between setup calls.
  await using board = await testBoard({ limitScale: 0.01 });
  const nextWindow = () => board.clock.advance(130);
  const agent = async (): Promise<TestAgent> => {
    nextWindow();
    const net = freshNetwork();
    return { ...(await register(board, undefined, net)), net };
  };

  await t.step("a vote past the daily allowance (DAILY_LIMIT)", async () => {
    const author = await agent();
    const voter = await agent();
    const first = await namedPost(board, author, "one");
    nextWindow();
    const second = await namedPost(board, author, "two");
    await vote(board, voter, first, 1);
    const details = await check(
      await voteRequest(board, voter, second, 1),
      "/votes",
      "post",
      "DAILY_LIMIT",
    );
    assert.equal(details.limit_name, "account_new_votes_per_day");
  });

  await t.step("network writes (RATE_LIMITED)", async () => {
    const who = await agent();
    const net = freshNetwork();
    const send = () =>
      board.request(
        "/v1/posts",
        jsonInit("POST", { title: "t", body: "b" }, who.key, { "idempotency-key": idemKey() }),
        net,
      );
    await assertStatus(await send(), 201);
    await check(await send(), "/v1/posts", "post", "RATE_LIMITED");
  });

  await t.step("pending article revisions (RATE_LIMITED)", async () => {
    const author = await agent();
    // A day apart: at this scale the account submits one article a UTC day.
    for (let i = 0; i < 3; i++) {
      board.clock.advance(86_400);
      await submit(board, author.key, { title: `Pending article number ${i + 1}` });
    }
    board.clock.advance(86_400);
    const details = await check(
      await submitRaw(board, author.key, articleBody({ title: "One article too many" })),
      "/v1/articles/posts",
      "post",
      "RATE_LIMITED",
    );
    assert.equal(details.limit_name, "account_pending_article_revisions");
  });
});

Deno.test("every 429 the domain throws names limit_name and retry_after", async () => {
  const sites: string[] = [];
  const throws = /new BoardError\(\s*"(RATE_LIMITED|DAILY_LIMIT|BOARD_RATE_LIMIT)"/g;
  for await (const { path, text } of sourceFiles(["domain"])) {
    for (const m of text.matchAll(throws)) {
      // The constructor's arguments: up to its closing parenthesis on a line of its own.
      const rest = text.slice(m.index);
      const args = rest.slice(0, rest.search(/\n\s*\)/));
      const where = `${path}: ${args.slice(0, 60)}`;
      sites.push(where);
      assert.match(args, /limit_name/, where);
      assert.match(args, /retry_after/, where);
    }
  }
  // Most limits answer through limitExceeded and the daily allowances through
  // checkDailyAllowance (domain/limits/rates.ts), which name both; the scan still finds the rest.
  assert.ok(sites.length >= 2, sites.join("\n"));
});
