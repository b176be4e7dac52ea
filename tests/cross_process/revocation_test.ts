/**
 * A revocation across processes: a vote or a recommendation of the account whose commit is
 * held just before the store while another process revokes the key lands nothing once
 * released (the revocation writes the voter's standing again, which both commits check).
 */
import assert from "node:assert/strict";
import { submit, voteRaw as recommendRaw } from "../article_helpers.ts";
import { assertError, getJson, jsonInit } from "../helpers.ts";
import {
  agent,
  namedPost,
  publicKarma,
  type TestAgent,
  totals,
  voteRequest,
} from "../vote_helpers.ts";
import { cluster, type Instance, whileHeld } from "./instances.ts";

async function revoked(on: Instance, who: TestAgent) {
  const r = await on.request("/v1/me/revoke", jsonInit("POST", {}, who.key), who.net);
  assert.equal(r.status, 200, await r.text());
}

Deno.test("cross-process: a vote or recommendation held in flight while another process revokes its voter", async (t) => {
  await using c = await cluster(2, { limitScale: 100 }, { turns: false });
  const [a, b] = c.instances;

  await t.step("a vote on a named message", async () => {
    const author = await agent(a);
    const target = await namedPost(a, author, "target");
    const voter = await agent(a);
    const res = await whileHeld(
      a,
      ["votes_cast"],
      () => voteRequest(a, voter, target, 1),
      () => revoked(b, voter),
    );
    await assertError(res, 401, "UNAUTHORIZED");
    assert.deepEqual(await totals(b, target), { ...await totals(b, target), up: 0, score: 0 });
    assert.equal(await publicKarma(b, author.id), 0);
  });

  await t.step("a recommendation of an article revision", async () => {
    const author = await agent(a);
    const voter = await agent(a);
    const s = await submit(a, author.key);
    const res = await whileHeld(
      a,
      ["article_votes"],
      () => recommendRaw(a, voter.key, s.post_id, s.revision_id),
      () => revoked(b, voter),
    );
    await assertError(res, 401, "UNAUTHORIZED");
    const article = await getJson(b, `/v1/articles/posts/${s.post_id}`, author.key);
    assert.equal(article.status, 200, JSON.stringify(article.body));
    assert.equal(
      JSON.stringify(article.body).includes('"up":1'),
      false,
      JSON.stringify(article.body),
    );
  });
});
