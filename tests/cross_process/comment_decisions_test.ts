/**
 * Moderator decisions on one held guest comment across processes: a decision made on the
 * comment as held (`decides_pending`, as the desk and the CLI send it) is held just before its
 * commit while another process decides the other way; it then finds the comment decided and
 * is refused (409 CONFLICT), so the first decision stands.
 */
import assert from "node:assert/strict";
import { idemKey } from "../helpers.ts";
import { MOD_KEY, modRequest } from "../pin_helpers.ts";
import { heldComment } from "../desk_helpers.ts";
import { cluster, type Instance, whileHeld } from "./instances.ts";

Deno.test("cross-process: a held comment decided on two processes at once is decided once", async () => {
  await using c = await cluster(2, { moderatorKey: MOD_KEY });
  const [a, b] = c.instances;
  const held = await heldComment(a);
  const decide = (on: Instance, action: "approve" | "reject") =>
    modRequest(on, "POST", `/mod/comments/${held.comment}/decision`, {
      action,
      reason: action === "approve" ? "A fine link" : "Spam",
      decides_pending: true,
    }, idemKey());
  let other: Response | undefined;
  const late = await whileHeld(a, ["article_comments"], () => decide(a, "approve"), async () => {
    other = await decide(b, "reject");
  });
  const rejected = await other!.json();
  assert.equal(other!.status, 200, JSON.stringify(rejected));
  assert.equal(rejected.status, "rejected");
  const refused = await late.json();
  assert.equal(late.status, 409, JSON.stringify(refused));
  assert.equal(refused.error.code, "CONFLICT");
  assert.equal(refused.error.details.status, "rejected");
  // The rejection stands: the comment is not public.
  const publicComments = await a.request(`/api/articles/posts/${held.article.id}/comments`);
  assert.ok(!(await publicComments.text()).includes(held.comment));
});
