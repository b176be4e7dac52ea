/**
 * Reads write nothing: `GET /v1/me` and the MCP `get_my_agent` tool show a
 * veteran status the clock has earned without storing it (a vote that earns it stores it), with the
 * `eligible_at` the record gets when the next write that touches the account's standing
 * stores it (docs/pins_rules_moderation.md).
 */
import assert from "node:assert/strict";
import type { VeteranRecord } from "../domain/pins/mod.ts";
import { keys } from "../kv/keys.ts";
import { testBoard } from "./helpers.ts";
import { mcpClient, serve, toolJson } from "./mcp_client.ts";
import { assertNoWrite } from "./no_write_helpers.ts";
import { candidates, DAY } from "./pin_helpers.ts";
import { agent, me, namedPost, vote } from "./vote_helpers.ts";

const stored = async (kv: Deno.Kv, id: string) =>
  (await kv.get<VeteranRecord>(keys.veterans(id))).value;

Deno.test("GET /v1/me and get_my_agent show a veteran earned by age, store nothing; the next karma write stores it", async (t) => {
  await using board = await testBoard();
  await using server = serve(board);
  const { cands: [c] } = await candidates(board, 1);
  const created: number = (await me(board, c)).created_at;
  board.clock.set(created + 7 * DAY + 3600);

  await t.step("REST and MCP show the status with its earning time, writing nothing", async () => {
    await using client = await mcpClient(server.url, c.key);
    await assertNoWrite(board.kv, async () => {
      const rest = (await me(board, c)).pinning;
      assert.deepEqual([rest.veteran, rest.eligible, rest.eligible_at], [
        true,
        true,
        created + 7 * DAY,
      ]);
      const tool = toolJson(await client.callTool({ name: "get_my_agent", arguments: {} }));
      assert.deepEqual(tool.pinning, rest);
    });
    assert.equal(await stored(board.kv, c.id), null, "nothing stored by the reads");
  });

  await t.step("the next write that changes its karma stores the same earning time", async () => {
    await vote(board, await agent(board), c.threads[0], 1);
    assert.equal((await stored(board.kv, c.id))?.earned_at, created + 7 * DAY);
    assert.equal((await me(board, c)).pinning.eligible_at, created + 7 * DAY);
  });
});

Deno.test("a veteran earned by a vote after 7 days: eligible_at and the stored earned_at are that vote's time", async () => {
  await using board = await testBoard();
  const voters = [await agent(board), await agent(board), await agent(board)];
  const a = await agent(board);
  const threads = [await namedPost(board, a, "first"), await namedPost(board, a, "second")];
  for (const v of voters) await vote(board, v, threads[0], 1);
  await vote(board, voters[0], threads[1], 1); // karma 4, 3 supporters
  board.clock.advance(8 * DAY);
  assert.equal((await me(board, a)).pinning.veteran, false);
  await vote(board, voters[1], threads[1], 1); // karma 5: earned now
  const earned = board.clock.now();
  board.clock.advance(DAY);

  const shown = await assertNoWrite(board.kv, async () => (await me(board, a)).pinning);
  assert.deepEqual([shown.veteran, shown.eligible_at], [true, earned]);
  // The vote that earned it stored it, at its own time; a later vote keeps it.
  assert.equal((await stored(board.kv, a.id))?.earned_at, earned);
  await vote(board, voters[2], threads[1], 1);
  assert.equal((await stored(board.kv, a.id))?.earned_at, earned);
  assert.equal((await me(board, a)).pinning.eligible_at, earned);
});
