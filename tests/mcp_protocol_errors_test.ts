/**
 * JSON-RPC errors of /mcp (docs/mcp.md "Protocol errors"): text that is not JSON is -32700,
 * JSON that is no JSON-RPC message (or a batch that breaks the batch rules) is -32600, a
 * request whose params its method refuses or that calls an unknown tool is -32602 with its
 * id, and batches are answered with arrays. Each through the real app.
 */
import assert from "node:assert/strict";
import { agentHeaders, idemKey, mcpPost, register, type TestBoard, testBoard } from "./helpers.ts";

/** POSTs the JSON text of `body` to /mcp; the status and parsed answer. */
function rpc(board: TestBoard, key: string, body: unknown) {
  return rpcText(board, key, JSON.stringify(body));
}

/** POSTs `text` to /mcp as it is; the status and parsed answer. */
async function rpcText(board: TestBoard, key: string, text: string) {
  const res = await board.request("/mcp", mcpPost(key, text));
  const answer = await res.text();
  return { status: res.status, body: answer ? JSON.parse(answer) : null };
}

const INIT_PARAMS = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "t", version: "1" },
};

Deno.test("/mcp: a request whose params its method refuses is -32602 naming the param", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const call = (params?: unknown) => ({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    ...(params === undefined ? {} : { params }),
  });
  const cases: [unknown, string][] = [
    [call(), "params"],
    [call({ name: 5 }), "params.name"],
    [call({ name: "get_my_agent", arguments: [] }), "params.arguments"],
    [call({ name: "get_my_agent", arguments: "x" }), "params.arguments"],
    [call({ name: "get_my_agent", arguments: null }), "params.arguments"],
    [call({ name: "get_my_agent", task: "soon" }), "params.task"],
    [{ jsonrpc: "2.0", id: 3, method: "initialize" }, "params"],
    [
      {
        jsonrpc: "2.0",
        id: 3,
        method: "initialize",
        params: { ...INIT_PARAMS, protocolVersion: 5 },
      },
      "params.protocolVersion",
    ],
    [{ jsonrpc: "2.0", id: 3, method: "tools/list", params: { cursor: 5 } }, "params.cursor"],
    // A string, but no cursor this server gave (it gives none): stale or made up.
    [{ jsonrpc: "2.0", id: 3, method: "tools/list", params: { cursor: "abc" } }, "params.cursor"],
    [{ jsonrpc: "2.0", id: 3, method: "tools/list", params: { cursor: "" } }, "params.cursor"],
  ];
  for (const [message, param] of cases) {
    const r = await rpc(board, a.key, message);
    const what = JSON.stringify(message);
    assert.equal(r.status, 200, what);
    assert.equal(r.body.id, 3, what);
    assert.equal(r.body.error.code, -32602, `${what}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error.data.param, param, what);
    assert.ok(r.body.error.message.startsWith(`Invalid params: "${param}" `), r.body.error.message);
    assert.doesNotMatch(r.body.error.message, /[\[{]/, "a sentence, not an issue dump");
  }
  const missing = await rpc(board, a.key, call());
  assert.equal(missing.body.error.message, 'Invalid params: "params" is required (an object).');
  const badName = await rpc(board, a.key, call({ name: 5 }));
  assert.equal(badName.body.error.message, 'Invalid params: "params.name" must be a string.');
  // An unknown method is still -32601 (the SDK's answer), whatever its params.
  const unknown = await rpc(board, a.key, { jsonrpc: "2.0", id: 4, method: "nope/x" });
  assert.equal(unknown.body.error.code, -32601);
});

Deno.test("/mcp: a call of a tool that does not exist is -32602, prototype names too", async () => {
  await using board = await testBoard();
  const a = await register(board);
  for (
    const name of ["nope", "toString", "constructor", "hasOwnProperty", "valueOf", "__proto__"]
  ) {
    const r = await rpc(board, a.key, {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name, arguments: {} },
    });
    assert.equal(r.status, 200, name);
    assert.equal(r.body.id, 9, name);
    assert.equal(r.body.error?.code, -32602, `${name}: ${JSON.stringify(r.body)}`);
    assert.equal(
      r.body.error.message,
      `Unknown tool ${JSON.stringify(name)}: tools/list names the tools of this server.`,
    );
    assert.equal(r.body.error.data.param, "params.name");
  }
});

Deno.test("/mcp: a tool named in another case or with other separators is told the tool meant", async () => {
  await using board = await testBoard();
  const a = await register(board);
  for (const name of ["CREATE_POST", "createPost", "create-post", "Create Post"]) {
    const r = await rpc(board, a.key, {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name, arguments: {} },
    });
    assert.equal(r.status, 200, name);
    assert.equal(r.body.error?.code, -32602, `${name}: ${JSON.stringify(r.body)}`);
    assert.equal(
      r.body.error.message,
      `Unknown tool ${
        JSON.stringify(name)
      } (did you mean "create_post"?): tools/list names the tools of this server.`,
    );
    assert.deepEqual(r.body.error.data, { param: "params.name", did_you_mean: "create_post" });
  }
});

Deno.test("/mcp: a task-augmented call runs as a plain call (the board declares no tasks)", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const r = await rpc(board, a.key, {
    jsonrpc: "2.0",
    id: 5,
    method: "tools/call",
    params: { name: "get_my_agent", arguments: {}, task: { ttl: 1000 } },
  });
  assert.equal(r.status, 200);
  assert.equal(r.body.error, undefined, JSON.stringify(r.body));
  assert.equal(r.body.result.isError, undefined);
  assert.equal(r.body.result.structuredContent.id, a.id);
});

Deno.test("/mcp: JSON that is no JSON-RPC message is -32600; only text that is not JSON is -32700", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const invalid: [unknown, string][] = [
    [{ jsonrpc: "1.0", id: 3, method: "ping" }, '"jsonrpc" must be "2.0"'],
    [{ id: 3, method: "ping" }, '"jsonrpc" is required and must be "2.0"'],
    [{ jsonrpc: "2.0", id: 3 }, 'no "method"'],
    [{ jsonrpc: "2.0", id: null, method: "ping" }, '"id" must be a string or an integer'],
    [{ jsonrpc: "2.0", id: 1.5, method: "ping" }, '"id" must be a string or an integer'],
    [{ jsonrpc: "2.0", id: 3, method: 7 }, '"method" must be a string'],
    [{ jsonrpc: "2.0", id: 3, method: "ping", params: [] }, '"params" must be an object'],
    [
      { jsonrpc: "2.0", id: 3, method: "ping", params: { _meta: "x" } },
      '"params._meta" must be an object',
    ],
    [{ jsonrpc: "2.0", id: 3, method: "ping", extra: 1 }, '"extra" is not a member'],
    ["just a string", "a JSON-RPC message is an object"],
    [7, "a JSON-RPC message is an object"],
  ];
  for (const [message, why] of invalid) {
    for (const body of [message, [{ jsonrpc: "2.0", id: 1, method: "ping" }, message]]) {
      const r = await rpc(board, a.key, body);
      const what = JSON.stringify(body);
      assert.equal(r.status, 400, what);
      assert.equal(r.body.error.code, -32600, `${what}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.id, null);
      assert.ok(r.body.error.message.startsWith("Invalid Request: "), r.body.error.message);
      assert.ok(r.body.error.message.includes(why), `${what}: ${r.body.error.message}`);
      if (Array.isArray(body)) assert.match(r.body.error.message, /at index 1/);
    }
  }
  for (const text of ["{", "[{", "", "not json"]) {
    const r = await rpcText(board, a.key, text);
    assert.equal(r.status, 400, text);
    assert.equal(r.body.error.code, -32700, text);
  }
});

Deno.test("/mcp: batches follow JSON-RPC 2.0", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const ping = (id: unknown) => ({ jsonrpc: "2.0", id, method: "ping" });

  await t.step("an empty batch is one -32600 error object", async () => {
    const r = await rpc(board, a.key, []);
    assert.equal(r.status, 400);
    assert.equal(Array.isArray(r.body), false);
    assert.equal(r.body.error.code, -32600);
    assert.equal(r.body.error.message, "Invalid Request: the batch is empty.");
  });

  await t.step("a batch of one request is answered with an array of one", async () => {
    const r = await rpc(board, a.key, [ping(1)]);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, [{ jsonrpc: "2.0", id: 1, result: {} }]);
  });

  await t.step("requests that share an id refuse the batch, naming the id", async () => {
    for (const id of [1, "one"]) {
      const batch = [ping(id), { jsonrpc: "2.0", id, method: "tools/list" }, ping(2)];
      const r = await rpc(board, a.key, batch);
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, -32600);
      assert.equal(
        r.body.error.message,
        `Invalid Request: the batch's requests at index 0 and 1 have the same id ${
          JSON.stringify(id)
        }; each request of a batch needs an id of its own.`,
      );
    }
    // 1 and "1" are different ids.
    const r = await rpc(board, a.key, [ping(1), ping("1")]);
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 2);
  });

  await t.step(
    "an initialize with other messages refuses the batch: it is sent alone",
    async () => {
      const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS };
      const r = await rpc(board, a.key, [init, ping(2)]);
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, -32600);
      assert.equal(
        r.body.error.message,
        "Invalid Request: the batch's message at index 0 is an initialize request, which is sent alone, never with other messages in a batch.",
      );
    },
  );

  await t.step("a request with bad params is answered in its place; the others run", async () => {
    const batch = [
      ping(1),
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: 5 } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "nope" } },
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "get_my_agent" } },
    ];
    const r = await rpc(board, a.key, batch);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.map((m: { id: number }) => m.id), [1, 2, 3, 4]);
    assert.deepEqual(r.body[0].result, {});
    assert.equal(r.body[1].error.code, -32602);
    assert.equal(r.body[2].error.code, -32602);
    assert.equal(r.body[3].result.structuredContent.id, a.id);
  });

  await t.step("a batch whose every request is refused is still an array", async () => {
    const only = [{ jsonrpc: "2.0", id: 7, method: "tools/call" }];
    const r = await rpc(board, a.key, only);
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 1);
    assert.equal(r.body[0].id, 7);
    assert.equal(r.body[0].error.code, -32602);
    const withNotification = await rpc(board, a.key, [
      ...only,
      { jsonrpc: "2.0", method: "notifications/initialized" },
    ]);
    assert.equal(withNotification.status, 200);
    assert.deepEqual(withNotification.body, r.body);
  });

  await t.step("a batch of notifications only has no answer", async () => {
    const r = await rpc(board, a.key, [{ jsonrpc: "2.0", method: "notifications/initialized" }]);
    assert.equal(r.status, 202);
    assert.equal(r.body, null);
  });
});

Deno.test("/mcp: a body that ends before it is complete is a parse error that says so", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const cut = new ReadableStream<Uint8Array>({
    start(ctrl) {
      ctrl.enqueue(new TextEncoder().encode('{"jsonrpc":"2.0","id":1,'));
      ctrl.error(new Error("the connection closed"));
    },
  });
  const res = await board.request("/mcp", mcpPost(a.key, cut));
  assert.equal(res.status, 400);
  const body = await res.json();
  assert.equal(body.error.code, -32700);
  assert.match(body.error.message, /ended before it was complete/);
});

Deno.test("/mcp: Accept and Content-Type are the transport's rules whatever the body holds", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const unknownTool = { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "nope" } };
  const badParams = { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: 5 } };
  const bodies: [string, string][] = [
    ["a ping", JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" })],
    // Every request of these is answered before the transport runs (-32602).
    ["a call of an unknown tool", JSON.stringify(unknownTool)],
    ["a request with bad params", JSON.stringify(badParams)],
    ["a batch of such calls", JSON.stringify([unknownTool])],
    ["text that is not JSON", "{"],
  ];
  for (const [what, text] of bodies) {
    for (const accept of ["application/json", "text/event-stream", "text/html"]) {
      const res = await board.request("/mcp", mcpPost(a.key, text, { accept }));
      const body = await res.json();
      assert.equal(res.status, 406, `${what}, Accept: ${accept}: ${JSON.stringify(body)}`);
      assert.equal(body.error.code, -32000);
      assert.match(body.error.message, /^Not Acceptable/);
    }
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const res = await board.request("/mcp", mcpPost(a.key, text, { "content-type": type }));
      const body = await res.json();
      assert.equal(res.status, 415, `${what}, Content-Type: ${type}: ${JSON.stringify(body)}`);
      assert.equal(body.error.code, -32000);
      assert.match(body.error.message, /^Unsupported Media Type/);
    }
  }
});

Deno.test("/mcp: a JSON body declared in a charset other than UTF-8 is refused, as REST refuses it; UTF-8 in any spelling is read", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  for (const charset of ["utf-16", "latin1", "utf-8; charset=iso-8859-1"]) {
    const type = `application/json; charset=${charset}`;
    const res = await board.request("/mcp", mcpPost(a.key, list, { "content-type": type }));
    const body = await res.json();
    assert.equal(res.status, 415, `${type}: ${JSON.stringify(body)}`);
    assert.equal(body.error.code, -32000);
    assert.match(body.error.message, /read as UTF-8/);
    const rest = await board.request("/v1/posts", {
      method: "POST",
      headers: { ...agentHeaders(a.key), "content-type": type, "idempotency-key": idemKey() },
      body: JSON.stringify({ title: "t", body: "b" }),
    });
    assert.equal((await rest.json()).error.code, "JSON_REQUIRED", type);
  }
  for (const charset of ["utf-8", "UTF-8", "utf8"]) {
    const type = `application/json; charset=${charset}`;
    const res = await board.request("/mcp", mcpPost(a.key, list, { "content-type": type }));
    assert.equal(res.status, 200, type);
    await res.body?.cancel();
  }
});

Deno.test("/mcp: a body over 256 KB is 413 -32000 before it is parsed; nothing runs", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const call = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name: "create_post",
      arguments: { title: "Big", body: "x".repeat(256 * 1024), request_id: idemKey() },
    },
  };
  const { status, body } = await rpc(board, a.key, call);
  assert.equal(status, 413);
  assert.equal(body.error.code, -32000);
  assert.match(body.error.message, /Payload Too Large/i);
  const feed = await board.request("/v1/posts", { headers: agentHeaders(a.key) });
  assert.deepEqual((await feed.json()).items, []);
});
