/**
 * Invalidation is declared with the keys: every builder in kv/keys.ts says what a write of
 * its keys makes stale (kv/invalidation.ts), and time boundaries of cached answers are
 * recorded by the clock comparison that decides them (domain/clock.ts `reached`, `today`).
 */
import assert from "node:assert/strict";
import { nextUtcMidnight, reached, today, utcDay } from "../domain/clock.ts";
import { declare, invalidationOf, shown } from "../kv/invalidation.ts";
import { keys } from "../kv/keys.ts";
import { trackRead } from "../domain/read_scope.ts";
import { sourceFiles } from "./source_files.ts";

Deno.test("every key builder declares what a write of its keys invalidates", () => {
  const missing = Object.entries(keys)
    .filter(([, build]) => (build as { invalidates?: unknown }).invalidates === undefined)
    .map(([name]) => name);
  assert.deepEqual(missing, []);
});

Deno.test("a key is its builder's prefix followed by the arguments; a range, the first ones", () => {
  assert.deepEqual(keys.votes("named", 7, "v1"), ["votes", "named", 7, "v1"]);
  assert.deepEqual(keys.rootsByTopic.range("b", "news"), ["roots_by_topic", "b", "news"]);
  assert.deepEqual(keys.agents.range(), ["agents"]);
  assert.deepEqual(keys.communityPins(), ["community_pins"]);
  assert.deepEqual(keys.metaFirstStart(), ["meta", "first_start"]);
});

Deno.test("each prefix (each meta entry) has exactly one builder, registered with its declaration", () => {
  const written = new Map<string, string>();
  for (const [name, build] of Object.entries(keys)) {
    assert.match(build.prefix, /^[a-z][a-z0-9_]*$/, `${name} has a snake_case prefix`);
    const place = JSON.stringify(build.range());
    assert.equal(written.get(place), undefined, `${name} and ${written.get(place)} share ${place}`);
    written.set(place, name);
    assert.equal(invalidationOf([build.prefix]), build.invalidates, `${name} is registered`);
  }
});

Deno.test("declaring a prefix twice fails at once", () => {
  shown("a_test_only_prefix");
  assert.throws(() => declare("a_test_only_prefix", { readCaches: false }), /declared twice/);
});

Deno.test("reached(): the comparison records the boundary while it lies ahead", async () => {
  const ahead = await trackRead(() => Promise.resolve(reached(100, 160)));
  assert.equal(ahead.value, false);
  assert.equal(ahead.scope.changesAt, 160);
  const passed = await trackRead(() => Promise.resolve(reached(160, 160)));
  assert.equal(passed.value, true);
  assert.equal(passed.scope.changesAt, Infinity, "a boundary already reached changes nothing");
  const several = await trackRead(() => Promise.resolve([reached(0, 50), reached(0, 30)]));
  assert.equal(several.scope.changesAt, 30, "the earliest boundary wins");
  assert.equal(reached(1, 2), false, "outside a tracked read it only compares");
});

Deno.test("today(): an answer that uses the UTC day changes at the next midnight", async () => {
  const now = Date.UTC(2026, 0, 5, 12) / 1000;
  const { value, scope } = await trackRead(() => Promise.resolve(today(now)));
  assert.equal(value, utcDay(now));
  assert.equal(scope.changesAt, nextUtcMidnight(now));
});

Deno.test("only domain/clock.ts records time boundaries (no separate remembered calls)", async () => {
  const offenders: string[] = [];
  for await (const { path, text } of sourceFiles()) {
    if (path === "domain/read_scope.ts" || path === "domain/clock.ts") continue;
    if (/\bnoteChangeAt\b/.test(text)) offenders.push(path);
  }
  assert.deepEqual(offenders, []);
});
