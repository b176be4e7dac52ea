/**
 * Instances starting together on one store file: while another process holds the embedded
 * store's write lock, a commit throws `database is locked`. Start-up work (the connection cap
 * marks, the agent-name index) and the bounded teardown runs retry such a commit instead of
 * ending the process (DESIGN "Portability of KV use").
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { boardOn, register } from "./helpers.ts";
import { wrapCommits } from "./commit_wrapper.ts";
import { indexAgentNameSkeletons, markAccountsOverCap } from "../domain/accounts/mod.ts";
import { keys } from "../kv/keys.ts";

Deno.test("start-up work retries a commit refused with 'database is locked'", async () => {
  let refuse = 0;
  const locked = (raw: Deno.Kv) =>
    wrapCommits(raw, (commit) => {
      if (refuse > 0) {
        refuse--;
        return Promise.reject(new TypeError("database is locked"));
      }
      return commit();
    });
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv: locked });
  await register(board, "locked-store-agent");
  // Make the start-up steps run again, each meeting a locked store on its first commits.
  await board.kv.delete(keys.metaNameIndexVersion());
  await board.kv.delete(keys.metaConnectionCap());
  refuse = 3;
  assert.ok((await indexAgentNameSkeletons(board.deps)) >= 1);
  assert.equal(refuse, 0, "the locked commits were met");
  refuse = 2;
  await markAccountsOverCap(board.deps);
  assert.equal(refuse, 0);
  assert.notEqual((await board.kv.get(keys.metaNameIndexVersion())).value, null);
  assert.notEqual((await board.kv.get(keys.metaConnectionCap())).value, null);
});
