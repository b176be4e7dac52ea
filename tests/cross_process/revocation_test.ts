/**
 * A revocation across processes: a vote, a recommendation or a rules edit of the account whose
 * commit is held just before the store while another process revokes the key lands nothing
 * once released (the revocation writes the voter's standing again, which the vote and the
 * recommendation check; the rules edit checks the account record), and is answered as any
 * request with a revoked key: 401 UNAUTHORIZED.
 */
import assert from "node:assert/strict";
import { ensureRulesPost } from "../../domain/rules/mod.ts";
import { submit, voteRaw as recommendRaw } from "../article_helpers.ts";
import { assertError, getJson, idemKey, jsonInit } from "../helpers.ts";
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

Deno.test("cross-process: a vote, recommendation or rules edit held in flight while another process revokes its account", async (t) => {
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
  await t.step("a rules edit", async () => {
    await ensureRulesPost(c.deps);
    const editor = await agent(a);
    const supporter = await agent(a);
    const own = await namedPost(a, editor, "karma for the edit");
    assert.equal((await voteRequest(a, supporter, own, 1)).status, 200);
    const before = await getJson(b, "/v1/rules", supporter.key);
    assert.equal(before.status, 200, JSON.stringify(before.body));
    const res = await whileHeld(
      a,
      ["rules_current"],
      () =>
        a.request(
          "/v1/rules",
          jsonInit(
            "PUT",
            {
              text: "Rules written while the key was revoked.",
              base_revision: before.body.revision,
            },
            editor.key,
            { "idempotency-key": idemKey() },
          ),
          editor.net,
        ),
      () => revoked(b, editor),
    );
    // A revoked key, not a karma requirement: the editor's karma is above 0.
    await assertError(res, 401, "UNAUTHORIZED");
    const after = await getJson(b, "/v1/rules", supporter.key);
    assert.equal(after.body.revision, before.body.revision);
    assert.equal(after.body.text, before.body.text);
  });
});
