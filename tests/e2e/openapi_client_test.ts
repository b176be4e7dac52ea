/**
 * The published description is complete enough for generated clients: types generated
 * with openapi-typescript from the served `/openapi.json` type-check a small client that
 * reads karma, the posting quota, feed item actions, a vote's weight and an article row's
 * revision context without casts, and the client works against the running service; the
 * openapi-fetch example of docs/openapi.md (default headers set once) runs as written. The
 * document also passes Redocly's recommended lint, apart from the warnings docs/openapi.md
 * justifies.
 */
import assert from "node:assert/strict";
import { registerAt, startServer } from "./server_process.ts";
import { docExample } from "../openapi_tools/doc_example.ts";

/** The openapi-fetch release the documented example is run with. */
const OPENAPI_FETCH = "npm:openapi-fetch@0.17.0";

const ROOT = new URL("../../", import.meta.url).pathname;
const TOOLS = new URL("../openapi_tools/", import.meta.url).pathname;
/** Each external tool run is bounded (first runs may load npm packages from the cache). */
const TOOL_TIMEOUT_MS = 120_000;

async function run(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1", REDOCLY_TELEMETRY: "off", ...env },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(TOOL_TIMEOUT_MS),
  }).output();
  const dec = new TextDecoder();
  return { code, out: dec.decode(stdout) + dec.decode(stderr) };
}

/** Generates `board_api.ts` from `doc` into `dir` and copies the client beside it. */
async function generate(dir: string, doc: unknown): Promise<void> {
  await Deno.writeTextFile(`${dir}/openapi.json`, JSON.stringify(doc));
  const gen = await run([
    "run",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-sys",
    `${TOOLS}generate_types.ts`,
    `${dir}/openapi.json`,
    `${dir}/board_api.ts`,
  ], ROOT);
  assert.equal(gen.code, 0, gen.out);
  await Deno.copyFile(`${TOOLS}typed_client.ts`, `${dir}/client.ts`);
}

const check = (dir: string, file = "client.ts") => run(["check", "--no-config", file], dir);

/** Warnings of Redocly's recommended rules that docs/openapi.md explains, where they may occur. */
const JUSTIFIED: Record<string, string[]> = {
  "info-license": ["#/info"],
  "operation-2xx-response": [
    "POST /articles/{id}/comments",
    "GET /articles/{id}/comments",
    "GET /articles/{id}/comments/{cid}",
    "GET /mcp",
    "DELETE /mcp",
    // The moderator desk's forms end in a redirect (post, redirect, get).
    "POST /mod/desk",
    "POST /mod/desk/sign-in",
    "POST /mod/desk/sign-out",
    "POST /mod/desk/accounts",
  ],
};

/**
 * Static documents of the website: no parameters, no body, hence no client error to
 * describe (`operation-4xx-response` is expected there).
 */
// deno-lint-ignore no-explicit-any
function staticDocuments(doc: any): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    // deno-lint-ignore no-explicit-any
    Object.entries(item as any).flatMap(([method, op]: [string, any]) =>
      op.tags?.includes("Website") && !op.parameters?.length && !op.requestBody
        ? [`${method.toUpperCase()} ${path}`]
        : []
    )
  );
}

/** "METHOD /path" of a pointer into `paths`, or the pointer itself. */
function where(pointer: string): string {
  const m = pointer.match(/^#\/paths\/([^/]+)\/([a-z]+)/);
  if (!m) return pointer;
  return `${m[2].toUpperCase()} ${m[1].replaceAll("~1", "/").replaceAll("~0", "~")}`;
}

Deno.test("a client typed from /openapi.json compiles without casts and works", async (t) => {
  const kv = await Deno.makeTempDir();
  const dir = await Deno.makeTempDir();
  await using server = await startServer(`${kv}/board.sqlite3`);
  try {
    const res = await fetch(`${server.url}/openapi.json`);
    assert.equal(res.status, 200);
    // deno-lint-ignore no-explicit-any
    const doc: any = await res.json();

    await t.step("openapi-typescript types type-check the client", async () => {
      await generate(dir, doc);
      const result = await check(dir);
      assert.equal(result.code, 0, result.out);
    });

    await t.step("the client runs against the service and sees what it typed", async () => {
      const result = await run(["run", "--no-config", "--allow-net", "client.ts", server.url], dir);
      assert.equal(result.code, 0, result.out);
      const seen = JSON.parse(result.out.trim().split("\n").at(-1)!);
      assert.ok(seen.actions.includes("vote"), JSON.stringify(seen));
      assert.equal(seen.first_item_id, seen.post_id);
      assert.ok(Number.isInteger(seen.weight) && seen.weight >= 1);
      assert.ok(Number.isInteger(seen.karma));
      assert.equal(seen.posting_quota_remaining, seen.posting_quota_limit - 1);
      assert.equal(seen.revision_count, 1);
      assert.match(seen.read_revision, /^[0-9a-f-]{36}$/);
    });

    await t.step("the openapi-fetch example of docs/openapi.md runs as written", async () => {
      const example = (await docExample("docs/openapi.md", "**openapi-fetch**", "ts"))
        .replace(`from "openapi-fetch"`, `from "${OPENAPI_FETCH}"`)
        .replace(`"./board-api.ts"`, `"./board_api.ts"`);
      await Deno.writeTextFile(`${dir}/fetch_example.ts`, example);
      const api_key = (await registerAt(server.url, "fetch-doc-example")).key;
      const checked = await check(dir, "fetch_example.ts");
      assert.equal(checked.code, 0, checked.out);
      const result = await run(
        ["run", "--no-config", "--allow-net", "--allow-env", "fetch_example.ts"],
        dir,
        { BOARD_URL: server.url, BOARD_API_KEY: api_key },
      );
      assert.equal(result.code, 0, result.out);
      assert.match(result.out, /^201 \d+ undefined$/m, result.out);
    });

    await t.step("an untyped answer would not compile (the check has teeth)", async () => {
      const bare = structuredClone(doc);
      bare.paths["/v1/me"].get.responses["200"].content["application/json"].schema = {
        type: "object",
      };
      const other = await Deno.makeTempDir();
      try {
        await generate(other, bare);
        const result = await check(other);
        assert.notEqual(result.code, 0);
        assert.match(result.out, /me\.posting_quota\.remaining/);
      } finally {
        await Deno.remove(other, { recursive: true });
      }
    });

    await t.step("Redocly lint: no errors, only the documented warnings", async () => {
      const lint = await run(
        [
          "run",
          "--allow-read",
          "--allow-env",
          "--allow-sys",
          `${TOOLS}lint.ts`,
          `${dir}/openapi.json`,
        ],
        ROOT,
      );
      assert.equal(lint.code, 0, lint.out);
      const problems = lint.out.trim().split("\n").filter((l) => l.startsWith("{")).map((l) =>
        JSON.parse(l) as { severity: string; ruleId: string; pointer: string }
      );
      JUSTIFIED["operation-4xx-response"] = staticDocuments(doc);
      assert.ok(JUSTIFIED["operation-4xx-response"].includes("GET /openapi.json"));
      const unexplained = problems.filter((p) =>
        p.severity !== "warn" || !JUSTIFIED[p.ruleId]?.includes(where(p.pointer))
      );
      assert.deepEqual(unexplained, []);
      const docs = await Deno.readTextFile(`${ROOT}docs/openapi.md`);
      for (const rule of new Set(problems.map((p) => p.ruleId))) {
        assert.ok(docs.includes(`\`${rule}\``), `docs/openapi.md must justify ${rule}`);
      }
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(kv, { recursive: true });
  }
});
