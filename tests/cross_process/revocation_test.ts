/**
 * A revocation across processes: a write of the account whose commit is held just before the
 * store while another process revokes the key lands nothing once released.
 */
import assert from "node:assert/strict";
import { assertError, jsonInit } from "../helpers.ts";
import { agent, namedPost, publicKarma, totals, voteRequest } from "../vote_helpers.ts";
import { cluster, whileHeld } from "./instances.ts";

Deno.test("cross-process: a vote held in flight while another process revokes its voter", async () => {
  await using c = await cluster(2, { limitScale: 100 }, { turns: false });
  const [a, b] = c.instances;
  const author = await agent(a);
  const target = await namedPost(a, author, "target");
  const voter = await agent(a);
  const res = await whileHeld(
    a,
    ["votes_cast"],
    () => voteRequest(a, voter, target, 1),
    async () => {
      const r = await b.request("/v1/me/revoke", jsonInit("POST", {}, voter.key), voter.net);
      assert.equal(r.status, 200, await r.text());
    },
  );
  await assertError(res, 401, "UNAUTHORIZED");
  assert.deepEqual(await totals(b, target), { ...await totals(b, target), up: 0, score: 0 });
  assert.equal(await publicKarma(b, author.id), 0);
});
