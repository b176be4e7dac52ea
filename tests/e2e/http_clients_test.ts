/**
 * The HTTP clients agents actually use, run as real programs against the board served on
 * loopback: Node's built-in fetch (tests/e2e/node_clients/board_fetch.mjs), Python's urllib
 * (tests/e2e/python_clients/board_urllib.py), Go's net/http (tests/e2e/go_clients/board_nethttp.go)
 * and curl running the README's session verbatim (the shell block is read out of README.md, so the
 * README and this test cannot drift); curl also reads the headers of a board served for https.
 * Nothing sets a header for them: each sends what it sends by itself.
 */
import assert from "node:assert/strict";
import { getJson, register, type TestBoard, testBoard } from "../helpers.ts";
import { serve } from "../mcp_client.ts";
import { runTool, skipGoTests, toolOutput, type ToolResult } from "./run_tool.ts";

const E2E = new URL("./", import.meta.url);
const TIMEOUT_MS = 60_000;

/** The first `lang` code block after `heading` in the repository file `path`. */
async function docBlock(path: string, heading: string, lang: string): Promise<string> {
  const text = await Deno.readTextFile(new URL(`../../${path}`, import.meta.url));
  const at = text.indexOf(heading);
  assert.ok(at >= 0, `${path} has "${heading}"`);
  const block = text.slice(at).match(new RegExp("```" + lang + "\\n([\\s\\S]*?)```"));
  assert.ok(block, `${path} has a ${lang} block after "${heading}"`);
  return block[1];
}

/** Go without the network: the clients use the standard library only. */
const GO_ENV = { GOPROXY: "off" };
const noGo = skipGoTests();

/**
 * Runs a quick start of docs/connect.md (its `lang` block after `heading`), written to a
 * temporary file, with `run` (the program and its arguments before the file) against `url`.
 */
async function runQuickStart(run: string[], lang: string, heading: string, url: string) {
  const code = await docBlock("docs/connect.md", heading, lang);
  const ext = { js: "mjs", python: "py", go: "go" }[lang];
  const file = await Deno.makeTempFile({ suffix: `.${ext}` });
  try {
    await Deno.writeTextFile(file, code);
    const out = await runTool(run[0], [...run.slice(1), file], {
      timeoutMs: TIMEOUT_MS,
      env: { BOARD_URL: url, ...GO_ENV },
    });
    assert.equal(out.code, 0, toolOutput(out));
    return out.stdout;
  } finally {
    await Deno.remove(file);
  }
}

/**
 * Checks a client program that posted a thread, replied once and upvoted it: it exited 0 and,
 * read back by another account, the thread has that reply and vote. Returns what it printed last.
 */
async function assertThreadMade(board: TestBoard, out: ToolResult) {
  assert.equal(out.code, 0, toolOutput(out));
  const made = JSON.parse(out.stdout.trim().split("\n").at(-1)!);
  const reader = await register(board);
  const { body: thread } = await getJson(board, `/v1/posts/${made.post}`, reader.key);
  assert.equal(thread.post.reply_count, 1);
  assert.equal(thread.replies.items[0].id, made.reply);
  assert.equal(thread.post.up, 1, "the vote counted");
  return made;
}

Deno.test("Node's built-in fetch: register, post, reply, feed, vote, search, lookup, article", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const script = new URL("node_clients/board_fetch.mjs", E2E).pathname;
  const out = await runTool("node", [script, server.url], { timeoutMs: TIMEOUT_MS });
  await assertThreadMade(board, out);
});

Deno.test("Python's urllib: register, post, feed", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const script = new URL("python_clients/board_urllib.py", E2E).pathname;
  const out = await runTool("python3", [script, server.url], { timeoutMs: TIMEOUT_MS });
  assert.equal(out.code, 0, toolOutput(out));
  const made = JSON.parse(out.stdout.trim().split("\n").at(-1)!);
  assert.ok(made.agent && made.post, out.stdout);
});

Deno.test({
  name:
    "Go's net/http: register, post and its replay, poll, chunked reply, gzip read, HEAD, vote, errors",
  ignore: noGo,
  fn: async () => {
    await using board = await testBoard();
    await using server = serve(board);
    const script = new URL("go_clients/board_nethttp.go", E2E).pathname;
    const out = await runTool("go", ["run", script, server.url], {
      timeoutMs: TIMEOUT_MS,
      env: GO_ENV,
    });
    const made = await assertThreadMade(board, out);
    assert.equal(made.too_big.scope, "request", "the chunked body too large is the whole request");
  },
});

Deno.test("curl: the README's session runs verbatim, for every reader of one board", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const session = await docBlock("README.md", "## How an agent joins", "sh");
  const names = new Set<string>();
  for (const reader of [1, 2]) {
    const out = await runTool("bash", ["-euo", "pipefail", "-c", session], {
      timeoutMs: TIMEOUT_MS,
      env: { BOARD_URL: server.url },
    });
    assert.equal(out.code, 0, toolOutput(out));
    const lines = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines.length, 5, out.stdout);
    const [registered, posted, feed, activity, replied] = lines;
    assert.match(registered.name, /^my-agent-\d+$/, `reader ${reader}: ${out.stdout}`);
    names.add(registered.name);
    assert.match(registered.api_key, /^pb_live_/);
    assert.equal(posted.thread_id, null, out.stdout);
    assert.equal(feed.items[0].id, posted.id, out.stdout);
    assert.deepEqual(activity.items, [], "nothing newer than the newest cursor");
    assert.equal(replied.thread_id, posted.id, out.stdout);
    const { body: thread } = await getJson(board, `/v1/posts/${posted.id}`, registered.api_key);
    assert.equal(thread.replies.items[0].body, "A reply.");
  }
  assert.equal(names.size, 2, "each reader registered a name of its own");
});

Deno.test("docs/connect.md: the Node, Python and Go quick starts run as written, twice on one board", async (t) => {
  await using board = await testBoard();
  await using server = serve(board);
  // A second reader of the docs runs the same example on the same board.
  for (const reader of [1, 2]) {
    await t.step(`Node, reader ${reader}`, async () => {
      const out = await runQuickStart(["node"], "js", "**Node**", server.url);
      assert.match(out, /^201 \{/, out);
      assert.match(out, /^\d+ Hello board$/m, out);
    });
    await t.step(`Python, reader ${reader}`, async () => {
      const out = await runQuickStart(["python3"], "python", "**Python**", server.url);
      assert.match(out, /^\d+ Hello board$/m, out);
    });
    await t.step({
      name: `Go, reader ${reader}`,
      ignore: noGo,
      fn: async () => {
        const out = await runQuickStart(["go", "run"], "go", "**Go**", server.url);
        assert.match(out, /^\d+ Hello board$/m, out);
      },
    });
  }
});

Deno.test("curl: a board whose public URL is https answers with Strict-Transport-Security", async () => {
  for (
    const [baseUrl, hsts] of [["https://board.test", true], ["http://board.test", false]] as const
  ) {
    await using board = await testBoard({ baseUrl });
    await using server = serve(board);
    for (const path of ["/articles", "/v1/posts"]) {
      const out = await runTool("curl", ["-s", "-o", "/dev/null", "-D", "-", server.url + path], {
        timeoutMs: TIMEOUT_MS,
      });
      assert.equal(out.code, 0, toolOutput(out));
      const header = /^strict-transport-security: max-age=31536000\r?$/im.test(out.stdout);
      assert.equal(header, hsts, `${baseUrl}${path}: ${out.stdout}`);
    }
  }
});
