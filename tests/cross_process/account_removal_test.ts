/**
 * Account removal across processes: its one commit (revocation, pins, connections, purge
 * mark, audit entry, Idempotency-Key) is checked against what another process commits
 * meanwhile, so one key runs once and a second removal only records its own entry.
 */
import assert from "node:assert/strict";
import { findMessage } from "../../domain/board/mod.ts";
import { keys } from "../../kv/keys.ts";
import { getJson, idemKey } from "../helpers.ts";
import { MOD_KEY, modRequest } from "../pin_helpers.ts";
import { agent, namedPost } from "../vote_helpers.ts";
import { cluster, type Instance } from "./instances.ts";

async function removal(on: Instance, agentId: string, key: string) {
  const res = await modRequest(on, "DELETE", `/mod/agents/${agentId}`, undefined, key);
  return { status: res.status, body: await res.json() };
}

Deno.test("cross-process: an account removal held in flight while another process removes it", async (t) => {
  await using c = await cluster(2, { moderatorKey: MOD_KEY });
  const [a, b] = c.instances;
  const removals = async () =>
    (await getJson(a, "/mod/audit", MOD_KEY)).body.items.filter((
      i: { action: string },
    ) => i.action === "remove_agent");

  await t.step("one Idempotency-Key: the held removal answers the other's outcome", async () => {
    const x = await agent(a);
    const post = await namedPost(a, x, "x's post");
    const key = idemKey();
    const held = await a.hold(["account_purges"]);
    const first = removal(a, x.id, key);
    await held.reached;
    const second = await removal(b, x.id, key);
    await held.release();
    const replayed = await first;
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.deepEqual(replayed, { status: 200, body: { ...second.body, replayed: true } });
    assert.equal((await removals()).length, 1, "one audit entry");
    assert.equal(await findMessage(c.kv, "named", post), null, "its content is gone");
    assert.equal((await c.kv.get(keys.accountPurges(x.id))).value, null);
  });

  await t.step("two keys: both answer the removal, each with its own audit entry", async () => {
    const y = await agent(a);
    const post = await namedPost(a, y, "y's post");
    const before = (await removals()).length;
    const held = await a.hold(["account_purges"]);
    const first = removal(a, y.id, idemKey());
    await held.reached;
    const second = await removal(b, y.id, idemKey());
    await held.release();
    const late = await first;
    assert.deepEqual([second.status, late.status], [200, 200], JSON.stringify(late.body));
    assert.deepEqual(
      [late.body.status, late.body.revoked_at, late.body.replayed],
      ["removed", second.body.revoked_at, false],
      "the late one found the account removed",
    );
    assert.equal((await removals()).length, before + 2);
    assert.equal(await findMessage(c.kv, "named", post), null);
    assert.equal((await c.kv.get(keys.accountPurges(y.id))).value, null);
  });
});
