/**
 * The storage side of the read caches: which writes bump the read-version key (the
 * declarations in kv/keys.ts, kv/invalidation.ts), the versioned handle that bumps it on every
 * write path (kv/versioned_kv.ts), the own-write marks its commits feed (domain/own_writes.ts),
 * and transactions whose reads are checks of their commit (kv/tx.ts).
 */
import assert from "node:assert/strict";
import { accountOf, unwrittenSince, writeMark } from "../domain/own_writes.ts";
import { bumpsReadVersion } from "../kv/invalidation.ts";
import { keys, READ_VERSION_KEY } from "../kv/keys.ts";
import { transact } from "../kv/tx.ts";
import { isVersioned, versionedKv } from "../kv/versioned_kv.ts";

const shared = READ_VERSION_KEY;

Deno.test("the declarations with the keys sort every kind of write; each bumps the one shared key", async (t) => {
  const cases: [string, Deno.KvKey, boolean, string | null][] = [
    // [what, key, shown by cached reads, account whose own write it is]
    ["a named summary", keys.messages("named", 7), true, null],
    ["an anonymous body", keys.bodies("b", 7), true, null],
    ["a board head", keys.boardHeads("named"), true, null],
    ["a search posting", keys.searchPostings("word", 7), true, null],
    ["an account record", keys.agents("a1"), true, "a1"],
    ["a standing", keys.votingStandings("a1"), true, "a1"],
    ["a veteran record", keys.veterans("a1"), true, "a1"],
    ["a vote (its voter)", keys.votes("named", 7, "v1"), true, "v1"],
    ["a voter's history", keys.votesByVoter("v1", 3), true, "v1"],
    ["a received vote", keys.votesByRecipient("a1", "v1", 7), true, null],
    ["the daily votes", keys.quotaUsage("agent_votes", "a1", 1), true, "a1"],
    ["the daily pins", keys.quotaUsage("agent_pins", "a1", 1), true, "a1"],
    [
      "the daily posts (never shown in a cached read)",
      keys.quotaUsage("agent_posts", "a1", 1),
      false,
      "a1",
    ],
    ["a network's daily posts", keys.quotaUsage("network_posts", "10.0.0.1", 1), false, null],
    ["an article recommendation", keys.articleVotes("r1", "a1"), true, "a1"],
    ["an article event", keys.articleEvents(3), true, null],
    ["the community pins", keys.communityPins(), true, null],
    ["the rules", keys.rulesCurrent(), true, null],
    ["a rate window", keys.rateWindows("network_writes", "10.0.0.1"), false, null],
    ["an idempotency record", keys.idempotency("named", "a1", "k"), false, "a1"],
    ["an OAuth access token", keys.oauthAccessTokens("h"), false, null],
    ["the read version itself", READ_VERSION_KEY, false, null],
    ["a key nobody declared (safe default)", ["something_new", 1], true, null],
  ];
  for (const [name, key, shows, account] of cases) {
    await t.step(name, () => {
      assert.equal(bumpsReadVersion(key), shows);
      assert.equal(accountOf(key), account);
    });
  }
});

Deno.test("versionedKv(): set, delete and atomic commits bump the version keys; a plain handle does not", async () => {
  const raw = await Deno.openKv(":memory:");
  const kv = versionedKv(raw);
  try {
    assert.equal(isVersioned(kv), true);
    assert.equal(isVersioned(raw), false);
    const stamp = async () => (await raw.get(shared)).versionstamp;
    assert.equal(await stamp(), null);
    await kv.set(keys.messages("named", 1), { x: 1 });
    const s1 = await stamp();
    assert.notEqual(s1, null);
    await kv.delete(keys.messages("named", 1));
    const s2 = await stamp();
    assert.notEqual(s2, s1);
    const mark = writeMark();
    const res = await kv.atomic().check({ key: ["x"], versionstamp: null })
      .set(keys.votes("named", 1, "v1"), 1).commit();
    assert.equal(res.ok, true);
    const s3 = await stamp();
    assert.notEqual(s3, s2);
    assert.equal(unwrittenSince("v1", mark), false, "the voter's own write is marked");
    assert.equal(unwrittenSince("v2", mark), true);
    await kv.set(keys.rateWindows("network_writes", "10.0.0.1"), [[1, 1]]);
    assert.equal(await stamp(), s3, "a rate window shows in no cached read");
    const before = writeMark();
    const failed = await kv.atomic().check({ key: ["x"], versionstamp: "00000000000000000000" })
      .set(keys.messages("named", 2), 1).set(keys.agents("a9"), 1).commit();
    assert.equal(failed.ok, false);
    assert.equal(await stamp(), s3, "a failed commit bumps nothing");
    assert.equal(unwrittenSince("a9", before), true, "and marks nothing");
    await raw.set(keys.messages("named", 3), 1);
    assert.equal(await stamp(), s3, "the plain handle never bumps (caches stay off on it)");
    const x = await kv.get(["x"]);
    const mutated = await kv.atomic().check(x)
      .mutate({ type: "set", key: keys.bodies("b", 4), value: "body" }).commit();
    assert.equal(mutated.ok, true);
    assert.notEqual(await stamp(), s3, "a mutate() after a check() bumps too (what transact uses)");
  } finally {
    raw.close();
  }
});

Deno.test("transact(): a write from elsewhere between the read and the commit costs a retry on fresh reads", async () => {
  await using kv = await Deno.openKv(":memory:");
  const counter = ["counters", "demo"];
  await kv.set(counter, 1);
  let runs = 0;
  const { value } = await transact(kv, async (tx) => {
    const n = (await tx.get<number>(counter)).value ?? 0;
    if (++runs === 1) await kv.set(counter, 40); // another writer, after this read
    tx.set(counter, n + 1);
    return n + 1;
  }, { lock: "demo" });
  assert.equal(runs, 2, "the first attempt's check failed");
  assert.equal(value, 41);
  assert.equal((await kv.get(counter)).value, 41);
});

Deno.test("ReadCache: bounded by bytes, second chance for served entries, emptied by a newer version", async (t) => {
  const { ReadCache } = await import("../domain/read_cache.ts");
  const entry = (json: string) => ({ stamps: "s1,", from: 0, until: Infinity, json });
  await t.step("past the byte budget the oldest entry goes, unless it was served since", () => {
    const cache = new ReadCache(8000); // each entry below counts (1 + 400) x 2 bytes
    for (const k of "abcdefghi") cache.set(k, entry("x".repeat(400)));
    assert.ok(cache.get("a")); // served: gets a second chance
    cache.set("j", entry("x".repeat(400)));
    assert.ok(cache.bytes <= 8000);
    assert.ok(cache.get("a"), "the served entry stayed");
    assert.equal(cache.get("b"), undefined, "the oldest unserved entry went");
  });
  await t.step("a newer version empties it; an older one is refused", () => {
    const cache = new ReadCache();
    assert.equal(cache.advance("00000000000000000001,"), true);
    cache.set("a", entry("{}"));
    assert.equal(cache.advance("00000000000000000001,"), true);
    assert.equal(cache.size, 1);
    assert.equal(cache.advance("00000000000000000002,"), true);
    assert.equal(cache.size, 0);
    assert.equal(cache.advance("00000000000000000001,"), false);
  });
});
