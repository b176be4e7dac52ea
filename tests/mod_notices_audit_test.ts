/**
 * Official pins and rules replacements by the moderator are one commit each: the change,
 * its audit record and its Idempotency-Key claim land together (domain/moderation/notices.ts).
 * A retry replays the first outcome without writing; a refusal is recorded and replayed; two
 * requests with one key at once make one change.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { type AuditRecord } from "../domain/moderation/mod.ts";
import { assertError, idemKey, type TestBoard, testBoard } from "./helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";
import { agent, namedPost } from "./vote_helpers.ts";

async function modJson(board: TestBoard, method: string, path: string, body: unknown, key: string) {
  const res = await modRequest(board, method, path, body, key);
  return { status: res.status, body: await res.json() };
}

/** Every audit record, oldest first. */
async function audit(board: TestBoard): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  for await (const e of board.kv.list<AuditRecord>({ prefix: keys.modAudit.range() })) {
    out.push(e.value);
  }
  return out;
}

Deno.test("moderator notices: change, audit record and claim in one commit; replays write nothing", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY }, { rulesPost: true });
  const author = await agent(board);
  const thread = await namedPost(board, author);

  await t.step("an official pin is audited with its answer; a retry replays it", async () => {
    const key = idemKey();
    const body = { board: "named", thread_id: thread, pinned: true };
    const first = await modJson(board, "POST", "/mod/pins", body, key);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body, {
      board: "named",
      thread_id: thread,
      pinned: true,
      changed: true,
      kind: "official",
      replayed: false,
    });
    const records = await audit(board);
    assert.equal(records.length, 1);
    const { replayed: _, ...result } = first.body;
    assert.deepEqual(
      [records[0].action, records[0].outcome, records[0].status, records[0].result],
      ["official_pin", "ok", 200, result],
    );
    assert.equal(records[0].finished_at, records[0].started_at);
    const again = await modJson(board, "POST", "/mod/pins", body, key);
    assert.deepEqual(again.body, { ...first.body, replayed: true });
    assert.equal((await audit(board)).length, 1, "a replay adds no record");
    await assertError(
      await modRequest(board, "POST", "/mod/pins", { ...body, pinned: false }, key),
      409,
      "IDEMPOTENCY_CONFLICT",
    );
  });

  await t.step("a refusal is recorded once and replayed as refused", async () => {
    const key = idemKey();
    const body = { board: "named", thread_id: crypto.randomUUID(), pinned: true };
    const first = await modRequest(board, "POST", "/mod/pins", body, key);
    const refused = await assertError(first, 404, "NOT_FOUND");
    assert.equal(refused.replayed, undefined);
    const last = (await audit(board)).at(-1)!;
    assert.deepEqual([last.action, last.outcome, last.status], ["official_pin", "error", 404]);
    const again = await modRequest(board, "POST", "/mod/pins", body, key);
    const replay = await assertError(again, 404, "NOT_FOUND");
    assert.equal(replay.replayed, true);
    assert.equal((await audit(board)).at(-1)!.seq, last.seq, "no second record");
  });

  await t.step(
    "a rules replacement: one revision, one record, even sent twice at once",
    async () => {
      const key = idemKey();
      const sent = await Promise.all(
        [0, 1].map(() => modJson(board, "PUT", "/mod/rules", { text: "One text for all." }, key)),
      );
      assert.deepEqual(sent.map((s) => s.status), [200, 200]);
      assert.deepEqual(sent.map((s) => s.body.revision), [2, 2]);
      assert.deepEqual(sent.map((s) => s.body.replayed).sort(), [false, true]);
      const cur = (await board.kv.get(keys.rulesCurrent())).value!;
      assert.deepEqual([cur.revision, cur.text], [2, "One text for all."]);
      const rules = (await audit(board)).filter((r) => r.action === "replace_rules");
      assert.equal(rules.length, 1);
      assert.deepEqual([rules[0].outcome, rules[0].result?.revision], ["ok", 2]);
      assert.equal("replayed" in (rules[0].result ?? {}), false);
    },
  );
});
