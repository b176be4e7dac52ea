/**
 * A reply to a comment whose locator a store written before kept without its copies reads the
 * comment after the locator, unchecked: every commit that changes a comment rewrites its
 * locator (and, deciding a published comment, its article's counters), which the reply's commit
 * checks. Held just before its commit while another process rejects that comment, the reply
 * fails its checks, reads again and is refused (404).
 */
import assert from "node:assert/strict";
import { idemKey } from "../helpers.ts";
import { commentBody, submitRaw } from "../article_helpers.ts";
import { MOD_KEY, modRequest } from "../pin_helpers.ts";
import { articleWithOlderComment } from "../website_helpers.ts";
import { cluster, whileHeld } from "./instances.ts";

Deno.test("cross-process: a reply to an older locator's comment rejected meanwhile is refused", async () => {
  await using c = await cluster(2, { moderatorKey: MOD_KEY });
  const [a, b] = c.instances;
  const { reader, article, top } = await articleWithOlderComment(a);
  let rejected: Response | undefined;
  const reply = () =>
    submitRaw(a, reader.key, commentBody(article.revision, { parent_id: top.comment_id }));
  const late = await whileHeld(a, ["article_comments"], reply, async () => {
    rejected = await modRequest(b, "POST", `/mod/comments/${top.comment_id}/decision`, {
      action: "reject",
      reason: "Off topic.",
    }, idemKey());
  });
  assert.equal(rejected!.status, 200, await rejected!.text());
  const refused = await late.json();
  assert.equal(late.status, 404, JSON.stringify(refused));
  assert.equal(refused.error.details.id, top.comment_id);
});
