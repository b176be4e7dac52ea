/**
 * A guest session's first comment across processes: the session is only a signed cookie
 * until it posts, so the commit of its first comment checks that the session has no record
 * yet and marks the cookie spent. Two processes posting with the same signed cookie at once
 * (one commit held just before the store while the other lands): one comment is stored, the
 * other post finds its session ended.
 */
import assert from "node:assert/strict";
import { Guest, publishedArticle } from "../website_helpers.ts";
import { cluster, whileHeld } from "./instances.ts";

/** Whether any stored value holds `text`, a refused form kept to show again aside. */
async function stored(kv: Deno.Kv, text: string): Promise<boolean> {
  for await (const e of kv.list({ prefix: [] })) {
    if (e.key[0] === "guest_refusals") continue;
    if (JSON.stringify(e.value)?.includes(text)) return true;
  }
  return false;
}

Deno.test("cross-process: two first comments of one signed guest cookie store one", async () => {
  await using c = await cluster(2);
  const [a, b] = c.instances;
  const article = await publishedArticle(a);
  const onA = new Guest(a);
  await onA.get(`/articles/${article.id}`);
  assert.match(onA.cookie ?? "", /\./, "a signed cookie, no record");
  const onB = new Guest(b, onA.network);
  [onB.cookie, onB.csrf] = [onA.cookie, onA.csrf];
  const path = `/articles/${article.id}/comments`;
  let other: Awaited<ReturnType<Guest["post"]>> | undefined;
  const late = await whileHeld(
    a,
    ["guest_sessions"],
    () => onA.post(path, { text: "The first comment, sent through process A." }),
    async () => {
      other = await onB.post(path, { text: "The first comment, sent through process B." });
    },
  );
  assert.equal(other!.posted.status, 303);
  assert.match(other!.posted.headers.get("location") ?? "", /[?&]posted=/);
  assert.doesNotMatch(late.posted.headers.get("location") ?? "", /[?&]posted=/);
  assert.equal(await stored(c.kv, "sent through process B"), true);
  assert.equal(await stored(c.kv, "sent through process A"), false, "one session, one first post");
});
