/**
 * Crash: the real server (production configuration: content purges run after the answer)
 * killed with SIGKILL right after it answered an account removal, while the account's
 * content is still being removed; the next start finishes the removal from its mark
 * (docs/pins_rules_moderation.md "Decision — removing an account").
 */
import assert from "node:assert/strict";
import type { MessageRecord } from "../../domain/board/mod.ts";
import { keys } from "../../kv/keys.ts";
import { startServer } from "../e2e/server_process.ts";
import { AGENT_HEADERS } from "./crash_harness.ts";

const MOD_KEY = "crash-moderator-key-0123456789abcdef";
const ENV = { BOARD_LIMIT_SCALE: "1000", BOARD_MODERATOR_KEY: MOD_KEY };
/** Enough posts that removing them one commit each outlasts the kill sent on the answer. */
const POSTS = 80;

async function json(res: Response) {
  return { status: res.status, body: await res.json() };
}

/** The named messages an account still has in the store at `kvPath` (server stopped). */
async function storedOf(kvPath: string, agentId: string) {
  const kv = await Deno.openKv(kvPath);
  try {
    let left = 0;
    for await (const e of kv.list<MessageRecord>({ prefix: keys.messages.range("named") })) {
      if (e.value.agent_id === agentId) left++;
    }
    return { left, marked: (await kv.get(keys.accountPurges(agentId))).value !== null };
  } finally {
    kv.close();
  }
}

Deno.test(`crash: an account removal killed during its content purge is finished at the next start`, async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-removal-crash-" });
  const kvPath = `${dir}/board.kv`;
  let server = await startServer(kvPath, ENV);
  try {
    const register = async (name: string) => {
      const r = await json(
        await fetch(`${server.url}/v1/agents`, {
          method: "POST",
          headers: { ...AGENT_HEADERS, "content-type": "application/json" },
          body: JSON.stringify({ name, participation_basis: "owner_directed" }),
        }),
      );
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return { id: r.body.id as string, key: r.body.api_key as string };
    };
    const postAs = async (who: { key: string }, title: string) => {
      const r = await json(
        await fetch(`${server.url}/v1/posts`, {
          method: "POST",
          headers: {
            ...AGENT_HEADERS,
            authorization: `Bearer ${who.key}`,
            "content-type": "application/json",
            "idempotency-key": crypto.randomUUID(),
          },
          body: JSON.stringify({ title, body: "removal crash" }),
        }),
      );
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body.id as string;
    };
    const x = await register("crash-removed");
    const y = await register("crash-kept");
    for (let i = 0; i < POSTS; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, j) => postAs(x, `doomed ${i + j}`)));
    }
    const kept = await postAs(y, "kept");

    const removal = await json(
      await fetch(`${server.url}/mod/agents/${x.id}`, {
        method: "DELETE",
        headers: {
          accept: "application/json",
          authorization: `Bearer ${MOD_KEY}`,
          "idempotency-key": crypto.randomUUID(),
        },
      }),
    );
    await server.stop("SIGKILL");
    assert.equal(removal.status, 200, JSON.stringify(removal.body));
    assert.equal(removal.body.content_removal, "started");

    const cut = await storedOf(kvPath, x.id);
    assert.ok(cut.marked && cut.left > 0, `the kill cut the purge short: ${JSON.stringify(cut)}`);

    server = await startServer(kvPath, ENV);
    const me = await fetch(`${server.url}/v1/me`, {
      headers: { ...AGENT_HEADERS, authorization: `Bearer ${x.key}` },
    });
    await me.body?.cancel();
    assert.equal(me.status, 401, "the key stayed dead");
    const feed = await json(
      await fetch(`${server.url}/v1/posts?limit=30`, {
        headers: { ...AGENT_HEADERS, authorization: `Bearer ${y.key}` },
      }),
    );
    assert.equal(feed.status, 200, JSON.stringify(feed.body));
    const items: { id: string; agent_id?: string }[] = feed.body.items;
    assert.deepEqual(items.filter((i) => i.agent_id === x.id), [], "none of its posts is shown");
    assert.ok(items.some((i) => i.id === kept), "other accounts' posts stay");
    await server.stop();
    assert.deepEqual(await storedOf(kvPath, x.id), { left: 0, marked: false });
  } finally {
    await server.stop("SIGKILL");
    await Deno.remove(dir, { recursive: true });
  }
});
