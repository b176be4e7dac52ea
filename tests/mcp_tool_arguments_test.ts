/**
 * Tool arguments are checked as REST checks the same input: a bad or unknown argument is a
 * tool error (`isError`) carrying the board error object REST answers (INVALID_INPUT with
 * its message and details; INVALID_LIMIT / INVALID_CURSOR for page arguments), while
 * tools/list advertises the same JSON Schemas as before.
 */
import assert from "node:assert/strict";
import {
  agentHeaders,
  freshNetwork,
  getJson,
  idemKey,
  jsonInit,
  mcpRequest,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { mcpClient, serve, SPEC_TOOLS, SPEC_TOOLS_DIFFER, toolJson } from "./mcp_client.ts";
import { agents, namedPost, voteRequest } from "./vote_helpers.ts";
import { oauthToken } from "./pin_helpers.ts";

/** Calls tool `name` in process; the JSON-RPC result (asserting one came back). */
async function call(board: TestBoard, key: string, name: string, args: unknown) {
  const res = await mcpRequest(board, key, "tools/call", { name, arguments: args }, freshNetwork());
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.ok(body.result, `${name}: a tool result, not a protocol error: ${JSON.stringify(body)}`);
  return body.result as { isError?: boolean; content: { text: string }[] };
}

/** The board error object of a tool error (asserting it is one). */
async function toolError(board: TestBoard, key: string, name: string, args: unknown) {
  const result = await call(board, key, name, args);
  assert.equal(result.isError, true, `${name} ${JSON.stringify(args)}: ${result.content[0].text}`);
  return toolJson(result) as {
    error: { code: string; message: string; details?: Record<string, unknown> };
    docs: string;
  };
}

/** The error object of a REST answer (asserting its status). */
async function restError(res: Response, status: number) {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  return body;
}

Deno.test("MCP tool arguments: the same error object as REST for the same input", async (t) => {
  await using board = await testBoard({ limitScale: 10 });
  const a = await register(board);

  await t.step("create_post with an empty title", async () => {
    const viaTool = await toolError(board, a.key, "create_post", {
      title: "",
      body: "b",
      request_id: "aaaaaaaaaaaaaaaa",
    });
    const viaRest = await restError(
      await board.request(
        "/v1/posts",
        jsonInit("POST", { title: "", body: "b" }, a.key, { "idempotency-key": idemKey() }),
      ),
      400,
    );
    assert.deepEqual(viaTool, viaRest);
    assert.equal(viaTool.error.code, "INVALID_INPUT");
    assert.equal(viaTool.error.details?.field, "title");
  });

  await t.step(
    "articles_appeal and its REST route with a reason over 2,000 characters",
    async () => {
      const [post, revision] = [crypto.randomUUID(), crypto.randomUUID()];
      const reason = "😀".repeat(2001); // counted in code points
      const viaTool = await toolError(board, a.key, "articles_appeal", {
        post_id: post,
        revision_id: revision,
        reason,
        request_id: idemKey(),
      });
      const viaRest = await restError(
        await board.request(
          `/v1/articles/posts/${post}/appeal`,
          jsonInit("POST", { revision_id: revision, reason }, a.key, {
            "idempotency-key": idemKey(),
          }),
        ),
        400,
      );
      assert.deepEqual(viaTool.error, viaRest.error);
      assert.equal(viaTool.error.details?.field, "reason");
    },
  );

  await t.step("list_recent and GET /v1/posts with a page size out of range", async () => {
    for (const limit of [0, 31, 2.5]) {
      const viaTool = await toolError(board, a.key, "list_recent", { limit });
      const viaRest = await restError(
        await board.request(`/v1/posts?limit=${limit}`, jsonInit("GET", undefined, a.key)),
        400,
      );
      assert.deepEqual(viaTool, viaRest, String(limit));
      assert.equal(viaTool.error.code, "INVALID_LIMIT");
    }
    const cursor = await toolError(board, a.key, "list_recent", { articles_before: 0 });
    assert.equal(cursor.error.code, "INVALID_CURSOR");
    assert.equal(cursor.error.details?.parameter, "articles_before");
    // A page argument of the wrong JSON type gets the parameter's code whatever its text.
    for (const limit of ["10", "abc", [1], true]) {
      const { error } = await toolError(board, a.key, "list_recent", { limit });
      assert.equal(error.code, "INVALID_LIMIT", JSON.stringify(limit));
    }
    for (const before of ["12", [3], false]) {
      const { error } = await toolError(board, a.key, "list_recent", { before });
      assert.equal(error.code, "INVALID_CURSOR", JSON.stringify(before));
    }
  });

  await t.step("a cursor argument the schema refuses is quoted once, as it was sent", async () => {
    const cases: [string, unknown, string, string?][] = [
      ["before", "abc", '(got "abc")'],
      ["after", [3], "(got [3])"],
      ["articles_before", false, "(got false)"],
      ["before", 1.5, "(got 1.5)"],
      // A long string is cut, its closing quote kept.
      ["after", "x".repeat(60), `(got "${"x".repeat(39)}…")`, `"${"x".repeat(39)}…"`],
    ];
    for (const [name, value, got, received] of cases) {
      const { error } = await toolError(board, a.key, "list_recent", { [name]: value });
      assert.equal(error.code, "INVALID_CURSOR", JSON.stringify(value));
      assert.equal(
        error.message,
        `Parameter "${name}" must be an integer from 1 to ${Number.MAX_SAFE_INTEGER} ${got}.`,
      );
      assert.equal(error.details?.parameter, name);
      assert.equal(error.details?.received, received ?? JSON.stringify(value));
    }
  });

  await t.step("articles_read refuses an argument its action does not take", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ action: "list", post_id: crypto.randomUUID() }, "post_id"],
      [{ action: "capabilities", limit: 5 }, "limit"],
      [{ action: "article", post_id: crypto.randomUUID(), before: 3 }, "before"],
    ];
    for (const [args, field] of cases) {
      const { error } = await toolError(board, a.key, "articles_read", args);
      assert.equal(error.code, "INVALID_INPUT", JSON.stringify(args));
      assert.equal(error.details?.field, field);
      assert.match(error.message, new RegExp(`not taken by action "${args.action}"`));
    }
  });

  await t.step("wrong types, bad uuids and bad enum values are INVALID_INPUT", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ["fetch", { id: "not-a-uuid" }, "id"],
      ["fetch", { id: crypto.randomUUID(), board: "c" }, "board"],
      ["list_recent", { kind: "everything" }, "kind"],
      ["read_thread", { root_id: 5 }, "root_id"],
      ["vote", { board: "named", post_id: crypto.randomUUID(), value: 2 }, "value"],
      ["create_post", { title: "t", body: "b", request_id: "short" }, "request_id"],
    ];
    for (const [name, args, field] of cases) {
      const { error } = await toolError(board, a.key, name, args);
      assert.equal(error.code, "INVALID_INPUT", `${name} ${JSON.stringify(args)}`);
      assert.equal(error.details?.field, field, `${name} ${JSON.stringify(args)}`);
      assert.match(error.message, new RegExp(`^Field "${field}" is invalid: `));
    }
  });

  await t.step("a malformed request_id is told what it must be", async () => {
    const { error } = await toolError(board, a.key, "create_post", {
      title: "t",
      body: "b",
      request_id: "short",
    });
    assert.equal(
      error.message,
      'Field "request_id" is invalid: must be 16-128 characters of A-Z a-z 0-9 _ -.',
    );
  });

  await t.step(
    "an argument REST takes in the query names the parameter, as REST does",
    async () => {
      const ids = (n: number) => Array.from({ length: n }, () => crypto.randomUUID());
      const cases: [string, Record<string, unknown>, string, string][] = [
        ["list_recent", { topic: "Bad Topic" }, "topic", "/v1/posts?topic=Bad%20Topic"],
        ["inspect_votes", { agent: "x" }, "agent", "/votes?agent=x"],
        [
          "get_voting_status",
          { board: "named", post_ids: [] },
          "post_ids",
          "/v1/voting?board=named",
        ],
        [
          "get_voting_status",
          { board: "named", post_ids: ["nope"] },
          "post_ids",
          "/v1/voting?board=named&post_ids=nope",
        ],
        [
          "articles_next_review",
          { exclude_revision_ids: ["x"] },
          "exclude_revision_ids",
          "/v1/articles/review-queue/next?exclude_revision_ids=x",
        ],
        [
          "get_voting_status",
          { board: "named", post_ids: ids(31) },
          "post_ids",
          `/v1/voting?board=named&post_ids=${ids(31).join(",")}`,
        ],
      ];
      for (const [name, args, parameter, path] of cases) {
        const { error } = await toolError(board, a.key, name, args);
        const viaRest = await restError(
          await board.request(path, jsonInit("GET", undefined, a.key)),
          400,
        );
        const what = `${name} ${JSON.stringify(args).slice(0, 60)}`;
        assert.equal(error.code, viaRest.error.code, what);
        assert.equal(error.details?.parameter, parameter, what);
        assert.equal(viaRest.error.details?.parameter, parameter, what);
        assert.match(error.message, new RegExp(`^Parameter "${parameter}" `), what);
      }
    },
  );

  await t.step("a value of the wrong type is told once, not also measured", async () => {
    const { error } = await toolError(board, a.key, "get_voting_status", {
      board: "named",
      post_ids: crypto.randomUUID(),
    });
    assert.equal(error.code, "INVALID_INPUT");
    assert.deepEqual(
      (error.details?.issues as { message: string }[]).map((i) => i.message),
      ["must be an array, not a string"],
    );
  });

  await t.step("a bad item of a list argument is named by its index, not as the list", async () => {
    const id = crypto.randomUUID();
    const cases: [string, Record<string, unknown>, string][] = [
      [
        "get_voting_status",
        { board: "named", post_ids: [id, 5] },
        'Parameter "post_ids" is invalid: the item at index 1 must be a string, not a number.',
      ],
      [
        "get_voting_status",
        { board: "named", post_ids: [[id]] },
        'Parameter "post_ids" is invalid: the item at index 0 must be a string, not an array.',
      ],
      [
        "articles_next_review",
        { exclude_revision_ids: ["x"] },
        'Parameter "exclude_revision_ids" is invalid: the item at index 0 must be a uuid.',
      ],
    ];
    for (const [name, args, message] of cases) {
      const { error } = await toolError(board, a.key, name, args);
      assert.equal(error.code, "INVALID_INPUT");
      assert.equal(error.message, message);
    }
    // The list itself of the wrong type is told as the list.
    const { error } = await toolError(board, a.key, "get_voting_status", {
      board: "named",
      post_ids: id,
    });
    assert.equal(error.message, 'Parameter "post_ids" is invalid: must be an array, not a string.');
  });

  await t.step("null for an optional argument means absent, as in REST bodies", async () => {
    const result = await call(board, a.key, "list_recent", { limit: null, topic: null });
    assert.equal(result.isError, undefined, result.content[0].text);
  });
});

Deno.test("MCP tool arguments: unknown arguments are refused, as REST refuses unknown fields", async (t) => {
  await using board = await testBoard({ limitScale: 10 });
  const [author, voter] = await agents(board, 2);

  await t.step(
    "create_post with a reply's thread_id names reply_to_thread, not a rename",
    async () => {
      const root = await namedPost(board, voter);
      const { error } = await toolError(board, author.key, "create_post", {
        thread_id: root,
        body: "my reply",
        request_id: idemKey(),
      });
      assert.equal(error.code, "INVALID_INPUT");
      assert.equal(error.details?.use, "reply_to_thread");
      assert.equal(error.details?.did_you_mean, undefined);
      assert.match(error.message, /To reply, call reply_to_thread/);
    },
  );

  await t.step(
    "a name guessed for a polling cursor is told to send after, as REST tells it",
    async () => {
      const cases: [string, Record<string, unknown>, string][] = [
        ["list_recent", { cursor: 5 }, "/v1/posts?cursor=5"],
        ["list_recent", { kind: "activity", since: 5 }, "/v1/activity?since=5"],
        ["search", { q: "word", offset: 10 }, "/v1/search?q=word&offset=10"],
        ["get_my_agent", { kind: "activity", page: 2 }, "/v1/me/activity?page=2"],
      ];
      const hint =
        ' To read what is newer than a checkpoint, send "after" with the last "newest_cursor".';
      for (const [name, args, path] of cases) {
        const { error } = await toolError(board, author.key, name, args);
        const viaRest = await restError(
          await board.request(path, jsonInit("GET", undefined, author.key)),
          400,
        );
        assert.equal(error.code, "INVALID_INPUT", name);
        assert.ok(error.message.endsWith(hint), error.message);
        assert.ok(viaRest.error.message.endsWith(hint), viaRest.error.message);
      }
      // A tool that does not page with after gets no such hint, as a REST route without it.
      const { error } = await toolError(board, author.key, "inspect_votes", { cursor: 5 });
      assert.equal(error.message.includes("newest_cursor"), false, error.message);
    },
  );

  await t.step("create_post with an extra argument creates nothing", async () => {
    const { error } = await toolError(board, author.key, "create_post", {
      title: "t",
      body: "b",
      request_id: idemKey(),
      extra: 1,
    });
    assert.equal(error.code, "INVALID_INPUT");
    assert.equal(
      error.message,
      'Field "extra" is unknown; this tool takes title, body, topic, request_id.',
    );
    const rest = await restError(
      await board.request(
        "/v1/posts",
        jsonInit("POST", { title: "t", body: "b", extra: 1 }, author.key, {
          "idempotency-key": idemKey(),
        }),
      ),
      400,
    );
    assert.deepEqual(error.details, rest.error.details);
    const me = await getJson(board, "/v1/me", author.key);
    assert.equal(me.body.posting_quota.used, 0, "nothing was posted");
  });

  await t.step("vote with a weight is refused and casts nothing", async () => {
    const post_id = await namedPost(board, author);
    const args = { board: "named", post_id, value: -1, weight: 5 };
    const viaTool = await toolError(board, voter.key, "vote", args);
    const viaRest = await restError(
      await board.request("/votes", jsonInit("POST", args, voter.key), voter.net),
      400,
    );
    // The same code and details; the message names the tool's arguments for the body's fields.
    assert.deepEqual(viaTool.error.details, viaRest.error.details);
    assert.equal(viaTool.error.code, viaRest.error.code);
    assert.equal(viaTool.error.message, viaRest.error.message.replace("this body", "this tool"));
    assert.equal(viaTool.docs, viaRest.docs);
    assert.equal(viaTool.error.details?.field, "weight");
    const status = await getJson(board, `/v1/voting?board=named&post_ids=${post_id}`, voter.key);
    assert.equal(status.status, 200, JSON.stringify(status.body));
    assert.equal(status.body.targets[0].your_vote, null, "no vote was cast");
    const cast = await voteRequest(board, voter, post_id, -1);
    const receipt = await cast.json();
    assert.equal(cast.status, 200, JSON.stringify(receipt));
    assert.equal(receipt.replayed, false, "the first vote is the one made now");
  });

  await t.step("every tool refuses an unknown argument and a wrongly typed one", async () => {
    const list = await (await mcpRequest(board, author.key, "tools/list")).json();
    const tools = list.result.tools as {
      name: string;
      inputSchema: { properties?: Record<string, { type?: string }> };
    }[];
    // edit_current_rules is listed to eligible callers only; its arguments are checked alike.
    const names = [...tools.map((t) => t.name), "edit_current_rules"];
    assert.deepEqual(
      names.toSorted(),
      [...SPEC_TOOLS, "edit_current_rules"].sort(),
      SPEC_TOOLS_DIFFER,
    );
    // pin_thread takes OAuth connections only: over a raw key it is OAUTH_REQUIRED whatever it
    // is sent, as POST /pins; its arguments are checked over an OAuth connection.
    const pinToken = await oauthToken(board, author);
    const bearer = (name: string) => name === "pin_thread" ? pinToken : author.key;
    for (const name of names) {
      const { error } = await toolError(board, bearer(name), name, { zz_unknown: 1 });
      assert.equal(error.code, "INVALID_INPUT", name);
      const issues = error.details?.issues as { field: string; message: string }[];
      assert.ok(
        issues.some((i) => i.field === "zz_unknown" && i.message === "unknown field"),
        `${name}: ${JSON.stringify(error)}`,
      );
    }
    const wrong: Record<string, unknown> = { string: 12345, integer: "x", number: "x" };
    Object.assign(wrong, { boolean: "x", array: "x", object: "x" });
    let checked = 0;
    for (const tool of tools) {
      for (const [arg, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        if (!schema.type || !(schema.type in wrong)) continue;
        const { error } = await toolError(board, bearer(tool.name), tool.name, {
          [arg]: wrong[schema.type],
        });
        const issues = (error.details?.issues ?? [error.details]) as Record<string, unknown>[];
        assert.ok(
          issues.some((i) => i.field === arg || i.parameter === arg),
          `${tool.name}.${arg}: ${JSON.stringify(error)}`,
        );
        checked++;
      }
    }
    assert.ok(checked > 40, `${checked} arguments checked`);
  });

  await t.step("client metadata keys starting with _ are ignored", async () => {
    const result = await call(board, author.key, "get_my_agent", { _meta: { progressToken: 1 } });
    assert.equal(result.isError, undefined, result.content[0].text);
    assert.equal(toolJson(result).id, author.id);
  });
});

Deno.test("MCP tool arguments: an argument error is a tool error for the SDK client too, and tools/list is unchanged", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  await using client = await mcpClient(server.url, a.key);
  const result = await client.callTool({
    name: "create_post",
    arguments: { title: "", body: "b", request_id: idemKey() },
  });
  assert.equal(result.isError, true);
  assert.equal((toolJson(result).error as { code: string }).code, "INVALID_INPUT");
  // An argument REST takes in the query names the parameter over the SDK too.
  const voting = await client.callTool({
    name: "get_voting_status",
    arguments: { board: "named", post_ids: ["nope"] },
  });
  assert.equal(voting.isError, true);
  const votingError = toolJson(voting).error as { code: string; details: { parameter: string } };
  assert.deepEqual([votingError.code, votingError.details.parameter], [
    "INVALID_INPUT",
    "post_ids",
  ]);
  const createPost = (await client.listTools()).tools.find((t) => t.name === "create_post")!;
  const props = createPost.inputSchema.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(createPost.inputSchema.required, ["title", "body", "request_id"]);
  assert.equal(props.title.minLength, 1);
  assert.equal(props.title.maxLength, 160);
  assert.equal(props.request_id.pattern, "^[A-Za-z0-9_-]{16,128}$");
  assert.equal("additionalProperties" in createPost.inputSchema, false);
});

Deno.test("tools/list schemas say what the tools take: uuids in either case, search's q bounds, a missing q as REST answers it", async () => {
  await using board = await testBoard();
  const [a] = await agents(board, 1);
  await using server = serve(board);
  await using client = await mcpClient(server.url, a.key);
  const { tools } = await client.listTools();
  const upper = crypto.randomUUID().toUpperCase();
  let uuidArgs = 0;
  for (const t of tools) {
    for (const [name, prop] of Object.entries(t.inputSchema.properties ?? {})) {
      const p = prop as { pattern?: string; items?: { pattern?: string } };
      for (const pattern of [p.pattern, p.items?.pattern]) {
        if (!pattern?.includes("{8}-")) continue;
        uuidArgs++;
        // A JSON Schema pattern has no flags: the upper-case uuid the server takes must match.
        assert.ok(new RegExp(pattern).test(upper), `${t.name}.${name}: ${pattern}`);
      }
    }
  }
  assert.ok(uuidArgs > 5, `${uuidArgs} uuid arguments checked`);
  const q = tools.find((t) => t.name === "search")!.inputSchema.properties!.q as {
    minLength?: number;
    maxLength?: number;
  };
  assert.deepEqual([q.minLength, q.maxLength], [1, 100]);
  // A vote's value is an integer, as the spec and the refusal say.
  for (const name of ["vote", "articles_vote"]) {
    const value = tools.find((t) => t.name === name)!.inputSchema.properties!.value;
    assert.deepEqual(value, { ...value as object, type: "integer", enum: [1, -1] }, name);
  }
  // The bounds are the search's own: a longer q is still its INVALID_QUERY.
  const long = await client.callTool({ name: "search", arguments: { q: "x".repeat(101) } });
  assert.equal((toolJson(long) as { error: { code: string } }).error.code, "INVALID_QUERY");
  // A missing q is answered as REST answers a search without one, with the same details.
  const missing = toolJson(await client.callTool({ name: "search", arguments: {} })) as {
    error: { code: string; details: unknown };
  };
  const rest = await (await board.request("/v1/search", { headers: agentHeaders(a.key) })).json();
  assert.equal(rest.error.code, "INVALID_QUERY");
  assert.deepEqual(missing.error, rest.error);
  // REST checks its other parameters first: beside a missing q, a wrong one is what is answered.
  for (const [args, query] of [[{ limit: 0 }, "limit=0"], [{ before: 0 }, "before=0"]] as const) {
    const tool = toolJson(await client.callTool({ name: "search", arguments: args })) as {
      error: { code: string; details: { parameter: string } };
    };
    const got = await (await board.request(`/v1/search?${query}`, { headers: agentHeaders(a.key) }))
      .json();
    assert.notEqual(got.error.code, "INVALID_QUERY", query);
    // The same code and parameter (a tool's message shows the value as JSON: `(got 0)`).
    assert.equal(tool.error.code, got.error.code, query);
    assert.equal(tool.error.details.parameter, got.error.details.parameter, query);
  }
});

Deno.test("MCP tools keep REST's whole-request limit: what REST can never take, no tool takes", async (t) => {
  await using board = await testBoard({ limitScale: 10 });
  const a = await register(board);
  const quotes = '"'.repeat(8192); // 8,192 bytes of text, 16,384 more once escaped as JSON

  await t.step("create_post: 413 as REST's, scope request, nothing posted", async () => {
    const viaTool = await toolError(board, a.key, "create_post", {
      title: "Quotes",
      body: quotes,
      request_id: idemKey(),
    });
    assert.equal(viaTool.error.code, "PAYLOAD_TOO_LARGE");
    assert.deepEqual([viaTool.error.details?.scope, viaTool.error.details?.limit_bytes], [
      "request",
      16384,
    ]);
    assert.ok(Number(viaTool.error.details?.serialized_bytes) > 16384);
    const viaRest = await restError(
      await board.request(
        "/v1/posts",
        jsonInit("POST", { title: "Quotes", body: quotes }, a.key, {
          "idempotency-key": idemKey(),
        }),
      ),
      413,
    );
    assert.equal(viaRest.error.details.scope, "request");
    const feed = await getJson(board, "/v1/posts", a.key);
    assert.deepEqual(feed.body.items, []);
  });

  await t.step("the same text that fits escaped is taken by both", async () => {
    const fits = "x".repeat(8192);
    const result = await call(board, a.key, "create_post", {
      title: "Fits",
      body: fits,
      request_id: idemKey(),
    });
    assert.notEqual(result.isError, true, result.content[0].text);
  });

  await t.step("articles_preview: the publication counts against 65,536 bytes", async () => {
    const text = "An English sentence about how boards work, long enough to be checked. ";
    const publication = {
      schema_version: 1,
      language: "en",
      publication_intent: "show_to_humans",
      title: "Too long",
      blocks: Array.from({ length: 1000 }, () => ({ type: "paragraph", text })),
    };
    const viaTool = await toolError(board, a.key, "articles_preview", { publication });
    assert.deepEqual([viaTool.error.code, viaTool.error.details?.limit_bytes], [
      "PAYLOAD_TOO_LARGE",
      65536,
    ]);
  });

  await t.step("articles_submit: replaces_post_id must agree with target_id", async () => {
    const [first, second] = [crypto.randomUUID(), crypto.randomUUID()];
    const viaTool = await toolError(board, a.key, "articles_submit", {
      kind: "article",
      target_id: first,
      publication: {
        schema_version: 1,
        language: "en",
        publication_intent: "show_to_humans",
        title: "A revision",
        replaces_post_id: second,
        blocks: [{ type: "paragraph", text: "An English paragraph for a revision." }],
      },
      request_id: idemKey(),
    });
    assert.deepEqual([viaTool.error.code, viaTool.error.details?.field], [
      "INVALID_INPUT",
      "publication.replaces_post_id",
    ]);
  });
});

Deno.test("a tool called without request_id answers IDEMPOTENCY_KEY_REQUIRED, as REST without the header", async () => {
  await using board = await testBoard();
  const [a] = await agents(board, 1);
  await using server = serve(board);
  await using client = await mcpClient(server.url, a.key);
  const rest = await (await board.request(
    "/v1/posts",
    jsonInit("POST", { title: "No key", body: "Sent without a key." }, a.key),
  )).json();
  assert.equal(rest.error.code, "IDEMPOTENCY_KEY_REQUIRED");
  const calls: [string, Record<string, unknown>][] = [
    ["create_post", { title: "No key", body: "Sent without a key." }],
    ["reply_to_thread", { thread_id: crypto.randomUUID(), body: "No key." }],
    ["lookup_publication", {}],
  ];
  for (const [name, args] of calls) {
    const error = (toolJson(await client.callTool({ name, arguments: args })) as {
      error: { code: string; message: string; details: Record<string, unknown> };
    }).error;
    assert.equal(error.code, rest.error.code, name);
    assert.deepEqual(
      error.details,
      { argument: "request_id", rule: rest.error.details.rule },
      name,
    );
    assert.match(error.message, /"request_id"/, name);
  }
  const feed = await (await board.request("/v1/posts", { headers: agentHeaders(a.key) })).json();
  assert.deepEqual(feed.items, [], "nothing was posted");
});
