/**
 * The voting-status read asks about at most 30 messages, whoever calls it: the domain
 * refuses more (the REST route and the MCP tool both call it).
 */
import assert from "node:assert/strict";
import type { Agent } from "../domain/accounts/mod.ts";
import { BoardError } from "../domain/errors.ts";
import { MAX_VOTING_TARGETS, votingTargets } from "../domain/votes/mod.ts";
import { keys } from "../kv/keys.ts";
import { register, testBoard } from "./helpers.ts";

Deno.test("votingTargets: 30 message ids are read, 31 are 400 INVALID_INPUT", async () => {
  await using board = await testBoard();
  const { id } = await register(board);
  const agent = (await board.kv.get<Agent>(keys.agents(id))).value!;
  const ids = (n: number) => Array.from({ length: n }, () => crypto.randomUUID());
  assert.equal(MAX_VOTING_TARGETS, 30);
  const read = await votingTargets(board.deps, agent, "named", ids(30));
  assert.equal(read.targets.length, 30);
  await assert.rejects(
    () => votingTargets(board.deps, agent, "named", ids(31)),
    (e: unknown) => {
      assert.ok(e instanceof BoardError);
      assert.equal(e.code, "INVALID_INPUT");
      assert.deepEqual(e.details, { parameter: "post_ids", max: 30, actual: 31 });
      return true;
    },
  );
});
