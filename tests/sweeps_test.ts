/** Tidy-up sweeps (domain/upkeep/sweeps.ts) and their Deno.cron registration (routes/cron.ts). */
import assert from "node:assert/strict";
import {
  type BoardHead,
  EMPTY_HEAD,
  eraseMessage,
  type MessageRecord,
} from "../domain/board/mod.ts";
import type { CommunityPin } from "../domain/pins/mod.ts";
import { runSweeps } from "../domain/upkeep/mod.ts";
import { keys } from "../kv/keys.ts";
import { transact } from "../kv/tx.ts";
import { denoCron, registerSweeps, SWEEP_CRON } from "../routes/cron.ts";
import { getJson, jsonInit, post, register, reply, type TestBoard, testBoard } from "./helpers.ts";

/** The state a crash leaves between a root's hide commit and the purge of its replies. */
async function crashAfterHidingRoot(board: TestBoard, rootSeq: number): Promise<void> {
  await transact(board.kv, async (tx) => {
    const rec = (await tx.get<MessageRecord>(keys.messages("named", rootSeq))).value!;
    const head = (await tx.get<BoardHead>(keys.boardHeads("named"))).value ?? EMPTY_HEAD;
    eraseMessage(tx, rec);
    tx.set(keys.boardHeads("named"), { ...head, purging: [...head.purging, rootSeq] })
      .set(keys.purges("named", rootSeq), { root_id: rec.id, started_at: board.clock.now() });
  });
}

async function count(kv: Deno.Kv, prefix: Deno.KvKey): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix })) n++;
  return n;
}

Deno.test("runSweeps() finishes a root purge a crash left unfinished", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const root = await post(board, a.key);
  for (let i = 0; i < 3; i++) await reply(board, a.key, root.id, `reply ${i}`);
  await crashAfterHidingRoot(board, root.seq);
  assert.equal(await count(board.kv, keys.repliesByRoot.range("named", root.seq)), 3);

  const report = await runSweeps(board.deps);
  assert.equal(report.purges_resumed, 1);
  assert.equal(await count(board.kv, keys.repliesByRoot.range("named", root.seq)), 0);
  assert.equal((await board.kv.get(keys.purges("named", root.seq))).value, null);
  const head = (await board.kv.get<BoardHead>(keys.boardHeads("named"))).value!;
  assert.deepEqual(head.purging, []);
  const activity = await getJson(board, "/v1/activity", a.key);
  assert.deepEqual(activity.body.items, []);
  assert.equal((await runSweeps(board.deps)).purges_resumed, 0, "nothing left to resume");
});

Deno.test("runSweeps() finishes an account removal a crash left unfinished", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  await post(board, a.key, { title: "Doomed" });
  const kept = await post(board, b.key, { title: "Kept" });
  // Crash right after the removal was marked.
  await board.kv.set(keys.accountPurges(a.id), { started_at: board.clock.now() });

  const report = await runSweeps(board.deps);
  assert.equal(report.account_purges_resumed, 1);
  assert.equal((await board.kv.get(keys.accountPurges(a.id))).value, null);
  assert.equal((await getJson(board, "/v1/me", a.key)).status, 401);
  const feed = await getJson(board, "/v1/posts", b.key);
  assert.deepEqual(feed.body.items.map((i: { id: string }) => i.id), [kept.id]);
});

Deno.test("runSweeps() drops dead community pins from storage", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const root = await post(board, a.key);
  const now = board.clock.now();
  const dead: CommunityPin = {
    board: "named",
    thread_id: root.id,
    thread_seq: root.seq,
    agent_id: a.id,
    created_at: now - 8 * 86400,
    expires_at: now - 86400,
    suspensions: 0,
  };
  await board.kv.set(keys.communityPins(), [dead]);
  const report = await runSweeps(board.deps);
  assert.equal(report.live_pins, 0);
  assert.deepEqual((await board.kv.get(keys.communityPins())).value, []);
});

Deno.test("registerSweeps() registers one cron job only where Deno.cron exists", async (t) => {
  await using board = await testBoard();

  await t.step("no cron in the runtime: nothing registered", () => {
    assert.equal(registerSweeps(board.deps, null), false);
  });

  await t.step("the job's handler runs the sweeps", async () => {
    const jobs: { name: string; schedule: string; handler: () => Promise<void> }[] = [];
    const registered = registerSweeps(board.deps, (name, schedule, handler) => {
      jobs.push({ name, schedule, handler });
    });
    assert.equal(registered, true);
    assert.deepEqual(jobs.map((j) => [j.name, j.schedule]), [
      [SWEEP_CRON.name, SWEEP_CRON.schedule],
    ]);
    const a = await register(board);
    const root = await post(board, a.key);
    await reply(board, a.key, root.id);
    await crashAfterHidingRoot(board, root.seq);
    await jobs[0].handler();
    assert.equal(await count(board.kv, keys.purges.range()), 0);
    assert.equal(await count(board.kv, keys.repliesByRoot.range("named", root.seq)), 0);
  });

  await t.step('deno.json enables "cron", so Deno.cron is found here', () => {
    assert.equal(typeof denoCron(), "function");
  });
});

Deno.test("runSweeps() records article transitions that fell due (a pending expiry)", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request(
    "/v1/articles/posts",
    jsonInit("POST", {
      schema_version: 1,
      language: "en",
      publication_intent: "show_to_humans",
      idempotency_key: "sweep-test-article-0001",
      title: "A pending article",
      blocks: [{
        type: "paragraph",
        text: "This is a short article that nobody will recommend, so it will expire.",
      }],
    }, a.key),
  );
  assert.equal(res.status, 202, await res.clone().text());
  await res.body?.cancel();
  assert.equal((await runSweeps(board.deps)).articles_settled, 0, "nothing due yet");
  board.clock.advance(8 * 86400);
  assert.equal((await runSweeps(board.deps)).articles_settled, 1);
  assert.equal((await runSweeps(board.deps)).articles_settled, 0);
});
