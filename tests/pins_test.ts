/**
 * Veteran status and community pins (spec "Pin rights" and "Pin" rows), with the injected
 * clock and karma earned through the real POST /votes. Pins are changed through the
 * domain function POST /pins runs, and end to end through a real OAuth token.
 */
import { claimedSeq } from "../domain/board/mod.ts";
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { type CommunityPin, livePins } from "../domain/pins/mod.ts";
import { EMPTY_STANDING } from "../domain/votes/mod.ts";
import { assertError, getJson, jsonInit, type TestBoard, testBoard } from "./helpers.ts";
import {
  candidates,
  DAY,
  deleteOwn,
  dropKarma,
  listPins,
  oauthToken,
  pinDomain,
  pinning,
  postPin,
  veterans,
} from "./pin_helpers.ts";
import { agent, anonymousPost, namedPost, vote } from "./vote_helpers.ts";

Deno.test("veteran status is earned at age 7 days, karma 5 and 3 distinct supporters", async (t) => {
  await using board = await testBoard();
  const { cands: [v], voters } = await candidates(board, 1);
  const created = (await pinning(board, v)).eligible_at - 7 * DAY;

  await t.step("before 7 days: karma and supporters are there, but not the age", async () => {
    const p = await pinning(board, v);
    assert.equal(p.karma, 5);
    assert.equal(p.supporters, 3);
    assert.equal(p.veteran, false);
    assert.equal(p.eligible, false);
    assert.equal(p.suspended, false);
    board.clock.advance(7 * DAY - 2);
    assert.equal((await pinning(board, v)).veteran, false);
  });

  await t.step("at 7 days the account is a veteran, and the feed viewer can pin", async () => {
    board.clock.advance(2);
    const p = await pinning(board, v);
    assert.equal(p.veteran, true);
    assert.equal(p.eligible, true);
    assert.equal(p.eligible_at, board.clock.now(), "eligible_at is when the status was earned");
    assert.ok(p.eligible_at >= created + 7 * DAY);
    const feed = await getJson(board, "/v1/posts", v.key);
    assert.deepEqual(feed.body.viewer.pinning, { can_pin: true, eligibility_checked: true });
    const other = await getJson(board, "/v1/posts", voters[0].key);
    assert.deepEqual(other.body.viewer.pinning, { can_pin: false, eligibility_checked: true });
    const anon = await getJson(board, "/b/posts");
    assert.deepEqual(anon.body.viewer.pinning, { can_pin: false, eligibility_checked: false });
  });

  await t.step("the earned status persists through small karma changes", async () => {
    await dropKarma(board, v, 4);
    const p = await pinning(board, v);
    assert.equal(p.karma, 1);
    assert.equal(p.veteran, true);
    assert.equal(p.eligible, true);
  });
});

Deno.test("veteran status needs each condition", async (t) => {
  await using board = await testBoard();
  const voters = await Promise.all([agent(board), agent(board), agent(board)]);

  await t.step("karma 4 with 3 supporters is not enough", async () => {
    const a = await agent(board);
    const t1 = await namedPost(board, a);
    const t2 = await namedPost(board, a);
    for (const v of voters) await vote(board, v, t1, 1);
    await vote(board, voters[0], t2, 1);
    board.clock.advance(7 * DAY);
    const p = await pinning(board, a);
    assert.deepEqual([p.karma, p.supporters, p.veteran], [4, 3, false]);
  });

  await t.step("karma 6 from only 2 distinct accounts is not enough", async () => {
    const a = await agent(board);
    for (let i = 0; i < 3; i++) {
      const th = await namedPost(board, a);
      for (const v of voters.slice(0, 2)) await vote(board, v, th, 1);
    }
    board.clock.advance(7 * DAY);
    const p = await pinning(board, a);
    assert.deepEqual([p.karma, p.supporters, p.veteran], [6, 2, false]);
  });

  await t.step("upvotes on deleted content do not count as support", async () => {
    const a = await agent(board);
    const keep = [await namedPost(board, a), await namedPost(board, a), await namedPost(board, a)];
    const gone = await namedPost(board, a);
    for (const th of keep) for (const v of voters.slice(0, 2)) await vote(board, v, th, 1);
    await vote(board, voters[2], gone, 1);
    await deleteOwn(board, a, gone);
    board.clock.advance(7 * DAY);
    const p = await pinning(board, a);
    assert.deepEqual([p.karma, p.supporters, p.veteran], [6, 2, false]);
  });
});

Deno.test("suspension at karma -5 retires pins at once; karma 5 restores rights, not pins", async (t) => {
  await using board = await testBoard();
  const { cands: [v] } = await veterans(board, 1);
  await pinDomain(board, v, { board: "named", thread_id: v.threads[0], pinned: true });
  assert.equal((await listPins(board)).length, 1);
  let down: string[] = [];

  await t.step("karma -5: the pin is gone from GET /pins and the feed at once", async () => {
    down = await dropKarma(board, v, 10);
    assert.equal((await listPins(board)).length, 0);
    const feed = await getJson(board, "/v1/posts", v.key);
    assert.deepEqual(feed.body.pinned, []);
    const p = await pinning(board, v);
    assert.deepEqual([p.karma, p.veteran, p.suspended, p.eligible], [-5, true, true, false]);
    assert.equal((await board.kv.get<CommunityPin[]>(keys.communityPins())).value?.length, 0);
  });

  await t.step("while suspended a new pin is 403 NOT_VETERAN; removing is free", async () => {
    board.clock.advance(DAY);
    await assert.rejects(
      pinDomain(board, v, { board: "named", thread_id: v.threads[1], pinned: true }),
      (e: Error & { code?: string; details?: { suspended?: boolean } }) =>
        e.code === "NOT_VETERAN" && e.details?.suspended === true,
    );
    const r = await pinDomain(board, v, {
      board: "named",
      thread_id: v.threads[0],
      pinned: false,
    });
    assert.equal(r.pinned, false);
  });

  await t.step("karma back to 5 restores pin rights; the old pin is not re-created", async () => {
    for (const th of down) await deleteOwn(board, v, th);
    const p = await pinning(board, v);
    assert.deepEqual([p.karma, p.veteran, p.suspended, p.eligible], [5, true, false, true]);
    assert.equal((await listPins(board)).length, 0);
    const again = await pinDomain(board, v, {
      board: "named",
      thread_id: v.threads[1],
      pinned: true,
    });
    assert.equal(again.changed, true);
  });
});

Deno.test("a suspension nobody looked at still retires the pin (decided in the karma commit)", async () => {
  await using board = await testBoard();
  const { cands: [v] } = await veterans(board, 1);
  await pinDomain(board, v, { board: "named", thread_id: v.threads[0], pinned: true });
  // Down to -5 and straight back to +5 with no read of the pin or the account in between.
  const down = await dropKarma(board, v, 10);
  for (const th of down) await deleteOwn(board, v, th);
  assert.equal((await listPins(board)).length, 0);
  const p = await pinning(board, v);
  assert.deepEqual([p.karma, p.suspended], [5, false]);
});

Deno.test("pin limits: one per veteran, exact repeat free, one new pin per UTC day", async (t) => {
  await using board = await testBoard();
  const { cands: [v] } = await veterans(board, 1);
  const extra = await namedPost(board, v, "third");
  const first = await pinDomain(board, v, {
    board: "named",
    thread_id: v.threads[0],
    pinned: true,
  });

  await t.step("the first pin is active for 7 days", () => {
    assert.equal(first.changed, true);
    assert.equal(first.pin?.expires_at, board.clock.now() + 7 * DAY);
    assert.equal(first.new_pins.used_today, 1);
  });

  await t.step("an exact repeat is free and does not extend the expiry", async () => {
    board.clock.advance(DAY);
    const again = await pinDomain(board, v, {
      board: "named",
      thread_id: v.threads[0],
      pinned: true,
    });
    assert.deepEqual([again.changed, again.replayed], [false, true]);
    assert.equal(again.pin?.expires_at, first.pin?.expires_at);
    assert.equal(again.new_pins.used_today, 0, "the repeat spent nothing on the new day");
  });

  await t.step("a second active pin is 409 PIN_CONFLICT", async () => {
    await assert.rejects(
      pinDomain(board, v, { board: "named", thread_id: v.threads[1], pinned: true }),
      (e: Error & { code?: string }) => e.code === "PIN_CONFLICT",
    );
  });

  await t.step("removing is free; a new pin the same UTC day is 429 DAILY_LIMIT", async () => {
    const off = await pinDomain(board, v, {
      board: "named",
      thread_id: v.threads[0],
      pinned: false,
    });
    assert.deepEqual([off.pinned, off.changed], [false, true]);
    const on = await pinDomain(board, v, { board: "named", thread_id: v.threads[1], pinned: true });
    assert.equal(on.changed, true, "the pin of this UTC day was made yesterday");
    await pinDomain(board, v, { board: "named", thread_id: v.threads[1], pinned: false });
    await assert.rejects(
      pinDomain(board, v, { board: "named", thread_id: extra, pinned: true }),
      (e: Error & { code?: string; retryAfter?: number; details?: Record<string, unknown> }) =>
        e.code === "DAILY_LIMIT" && (e.retryAfter ?? 0) > 0 &&
        e.details?.scope === "account" && e.details?.window === "utc_day",
    );
  });

  await t.step("the next UTC day allows a new pin (nothing was refunded)", async () => {
    board.clock.set((Math.floor(board.clock.now() / DAY) + 1) * DAY);
    const r = await pinDomain(board, v, { board: "named", thread_id: extra, pinned: true });
    assert.equal(r.changed, true);
  });
});

Deno.test("pin limits: 3 community slots across both boards", async (t) => {
  await using board = await testBoard();
  const { cands } = await veterans(board, 4);
  const bThread = await anonymousPost(board, "on b");
  await pinDomain(board, cands[0], {
    board: "named",
    thread_id: cands[0].threads[0],
    pinned: true,
  });
  board.clock.advance(60);
  await pinDomain(board, cands[1], { board: "b", thread_id: bThread, pinned: true });
  board.clock.advance(60);
  await pinDomain(board, cands[2], {
    board: "named",
    thread_id: cands[2].threads[0],
    pinned: true,
  });

  await t.step("a fourth pin is 409 PIN_CONFLICT naming the next expiry", async () => {
    await assert.rejects(
      pinDomain(board, cands[3], { board: "named", thread_id: cands[3].threads[0], pinned: true }),
      (e: Error & { code?: string; details?: { limit?: number } }) =>
        e.code === "PIN_CONFLICT" && e.details?.limit === 3,
    );
  });

  await t.step("GET /pins lists each board's pins newest first, metadata only", async () => {
    const named = await listPins(board);
    assert.deepEqual(named.map((p) => p.thread_id), [cands[2].threads[0], cands[0].threads[0]]);
    for (const p of named) {
      assert.equal(p.kind, "community");
      assert.equal("body" in p || "preview" in p, false);
      assert.equal(typeof p.expires_at, "number");
    }
    const b = await listPins(board, "b");
    assert.deepEqual(b.map((p) => [p.thread_id, p.kind]), [[bThread, "community"]]);
  });

  await t.step("a slot freed on one board is usable from the other", async () => {
    await pinDomain(board, cands[1], { board: "b", thread_id: bThread, pinned: false });
    const r = await pinDomain(board, cands[3], {
      board: "named",
      thread_id: cands[3].threads[0],
      pinned: true,
    });
    assert.equal(r.changed, true);
  });
});

Deno.test("pins expire after 7 days by the clock alone, and on key revocation", async (t) => {
  await using board = await testBoard();
  const { cands } = await veterans(board, 4);
  const pinnedAt = board.clock.now();
  for (const c of cands.slice(0, 3)) {
    await pinDomain(board, c, { board: "named", thread_id: c.threads[0], pinned: true });
  }

  await t.step("revoking a key retires its pin and frees the slot", async () => {
    board.clock.advance(3600);
    const res = await board.request(
      "/v1/me/revoke",
      jsonInit("POST", {}, cands[2].key),
      cands[2].net,
    );
    assert.equal(res.status, 200);
    assert.equal((await listPins(board)).length, 2);
    const stored = (await board.kv.get<CommunityPin[]>(keys.communityPins())).value ?? [];
    assert.equal(stored.some((p) => p.agent_id === cands[2].id), false);
    const r = await pinDomain(board, cands[3], {
      board: "named",
      thread_id: cands[3].threads[0],
      pinned: true,
    });
    assert.equal(r.changed, true);
  });

  await t.step("one second before 7 days the pins show; at 7 days they never do", async () => {
    board.clock.set(pinnedAt + 7 * DAY - 1);
    assert.equal((await listPins(board)).length, 3);
    board.clock.set(pinnedAt + 7 * DAY);
    const left = await listPins(board);
    assert.deepEqual(left.map((p) => p.thread_id), [cands[3].threads[0]]);
    const feed = await getJson(board, "/v1/posts", cands[0].key);
    assert.deepEqual(feed.body.pinned.map((p: { id: string }) => p.id), [cands[3].threads[0]]);
  });
});

Deno.test("pinned: false on a pin that expired is a replay: nothing is reported or charged", async () => {
  await using board = await testBoard();
  const { cands: [v], voters } = await veterans(board, 1);
  const thread = await namedPost(board, voters[0], "Pinned by a veteran");
  const on = { board: "named" as const, thread_id: thread };
  assert.equal((await pinDomain(board, v, { ...on, pinned: true })).changed, true);
  board.clock.advance(7 * DAY);
  // No read has tidied the expired pin away: the veteran's own removal meets it first.
  const off = await pinDomain(board, v, { ...on, pinned: false });
  assert.deepEqual([off.changed, off.replayed, off.pinned], [false, true, false]);
  // The thread's author was told of the pin, never of an unpin that did not happen.
  const activity = await getJson(board, "/v1/me/activity", voters[0].key);
  const types = activity.body.items.map((i: { type: string }) => i.type);
  assert.ok(types.includes("pin"), JSON.stringify(types));
  assert.ok(!types.includes("unpin"), JSON.stringify(types));
  assert.deepEqual(await listPins(board), []);
});

Deno.test("pinned: false on an official notice is 409 PIN_CONFLICT: the notice stays pinned", async () => {
  await using board = await testBoard({}, { rulesPost: true });
  const { cands: [v] } = await veterans(board, 1);
  const official = (await listPins(board)).find((p) => p.kind === "official");
  assert.ok(official, "the rules thread is an official notice");
  const thread_id = official.thread_id as string;
  await assert.rejects(
    pinDomain(board, v, { board: "named", thread_id, pinned: false }),
    (e: Error & { code?: string; details?: Record<string, unknown> }) => {
      assert.equal(e.code, "PIN_CONFLICT");
      assert.match(e.message, /official notice; only moderators can unpin it/);
      assert.equal(e.details?.official, true);
      return true;
    },
  );
  const still = (await listPins(board)).find((p) => p.thread_id === thread_id);
  assert.equal(still?.kind, "official");
});

Deno.test("pin targets: root threads of either board only", async (t) => {
  await using board = await testBoard();
  const { cands: [v], voters } = await veterans(board, 1);
  const replyTo = await namedPost(board, voters[0]);
  const rep = await board.request(
    `/v1/posts/${replyTo}/replies`,
    jsonInit("POST", { body: "a reply" }, voters[0].key, {
      "idempotency-key": crypto.randomUUID(),
    }),
    voters[0].net,
  );
  const replyId = (await rep.json()).id;

  await t.step("a reply is 400, an unknown thread 404, a non-veteran 403", async () => {
    await assert.rejects(
      pinDomain(board, v, { board: "named", thread_id: replyId, pinned: true }),
      (e: Error & { code?: string }) => e.code === "INVALID_INPUT",
    );
    await assert.rejects(
      pinDomain(board, v, { board: "named", thread_id: crypto.randomUUID(), pinned: true }),
      (e: Error & { code?: string }) => e.code === "NOT_FOUND",
    );
    await assert.rejects(
      pinDomain(board, v, { board: "b", thread_id: v.threads[0], pinned: true }),
      (e: Error & { code?: string }) => e.code === "NOT_FOUND",
    );
    await assert.rejects(
      pinDomain(board, voters[0], { board: "named", thread_id: replyTo, pinned: true }),
      (e: Error & { code?: string }) => e.code === "NOT_VETERAN",
    );
  });

  await t.step("another veteran's pin cannot be taken or removed", async () => {
    const [w] = (await veterans(board, 1)).cands;
    await pinDomain(board, v, { board: "named", thread_id: replyTo, pinned: true });
    for (const pinned of [true, false]) {
      await assert.rejects(
        pinDomain(board, w, { board: "named", thread_id: replyTo, pinned }),
        (e: Error & { code?: string }) => e.code === "PIN_CONFLICT",
      );
    }
  });

  await t.step("a deleted thread's pin disappears", async () => {
    await deleteOwn(board, voters[0], replyTo);
    assert.equal((await listPins(board)).length, 0);
  });
});

Deno.test("pinned threads ride the initial feed page only, without moving items or cursors", async () => {
  await using board = await testBoard();
  const { cands: [v] } = await veterans(board, 1);
  for (let i = 0; i < 12; i++) await namedPost(board, v, `filler ${i}`);
  const before = await getJson(board, "/v1/posts", v.key);
  const activityBefore = await getJson(board, "/v1/activity", v.key);
  await pinDomain(board, v, { board: "named", thread_id: v.threads[0], pinned: true });
  const after = await getJson(board, "/v1/posts", v.key);
  assert.deepEqual(after.body.pinned.map((p: { id: string }) => p.id), [v.threads[0]]);
  assert.equal(after.body.pinned[0].pin.kind, "community");
  assert.deepEqual(
    after.body.items.map((i: { id: string }) => i.id),
    before.body.items.map((i: { id: string }) => i.id),
  );
  assert.equal(after.body.next_before, before.body.next_before);
  assert.equal(after.body.newest_cursor, before.body.newest_cursor);
  const activity = await getJson(board, "/v1/activity", v.key);
  assert.deepEqual(activity.body.pinned.map((p: { id: string }) => p.id), [v.threads[0]]);
  assert.deepEqual(activity.body.items, activityBefore.body.items);
  for (const path of [`/v1/posts?before=${after.body.next_before}`, "/v1/posts?after=1"]) {
    const page = await getJson(board, path, v.key);
    assert.equal(page.status, 200);
    assert.equal("pinned" in page.body, false, path);
  }
  const b = await getJson(board, "/b/posts");
  assert.deepEqual(b.body.pinned, [], "a named pin is not on the anonymous board");
});

Deno.test("POST /pins: OAuth board:write only, end to end with a real token", async (t) => {
  await using board = await testBoard();
  const { cands: [v] } = await veterans(board, 1);
  const body = { board: "named", thread_id: v.threads[0], pinned: true };

  await t.step("a raw API key is 403 OAUTH_REQUIRED saying so; no credential is 401", async () => {
    const res = await postPin(board, v.key, body);
    const err = await res.json();
    assert.equal(res.status, 403);
    assert.equal(err.error.code, "OAUTH_REQUIRED");
    assert.match(err.error.message, /raw API keys/);
    assert.equal((await postPin(board, null, body)).status, 401);
    assert.equal((await listPins(board)).length, 0);
  });

  await t.step(
    "the rule is the domain's: any door calling it with a raw key is refused",
    async () => {
      await assert.rejects(
        () =>
          pinDomain(board, v, { board: "named", thread_id: v.threads[0], pinned: true }, "api_key"),
        (e: { code?: string }) => e.code === "OAUTH_REQUIRED",
      );
      assert.equal((await listPins(board)).length, 0);
    },
  );

  const token = await oauthToken(board, v);

  await t.step("the body has exactly board, thread_id and pinned", async () => {
    await assertError(await postPin(board, token, { ...body, note: "x" }), 400, "INVALID_INPUT");
    await assertError(
      await postPin(board, token, { board: "named", pinned: true }),
      400,
      "INVALID_INPUT",
    );
    await assertError(await postPin(board, token, { ...body, board: "c" }), 400, "INVALID_INPUT");
    await assertError(
      await postPin(board, token, { ...body, pinned: "yes" }),
      400,
      "INVALID_INPUT",
    );
  });

  await t.step("pin, exact repeat, GET /pins, unpin", async () => {
    const res = await postPin(board, token, body);
    const receipt = await res.json();
    assert.equal(res.status, 200, JSON.stringify(receipt));
    assert.deepEqual([receipt.pinned, receipt.changed, receipt.replayed], [true, true, false]);
    assert.equal(receipt.pin.pinned_by.agent_id, v.id);
    const again = await (await postPin(board, token, body)).json();
    assert.deepEqual([again.changed, again.replayed], [false, true]);
    assert.equal(again.pin.expires_at, receipt.pin.expires_at);
    const listed = await listPins(board);
    assert.deepEqual(listed.map((p) => p.thread_id), [v.threads[0]]);
    const off = await (await postPin(board, token, { ...body, pinned: false })).json();
    assert.deepEqual([off.pinned, off.changed], [false, true]);
    assert.equal((await listPins(board)).length, 0);
  });

  await t.step("GET /pins validates board", async () => {
    await assertError(await board.request("/pins?board=c"), 400, "INVALID_INPUT");
    await assertError(await board.request("/pins?x=1"), 400, "INVALID_INPUT");
  });
});

Deno.test("pin changes count toward the network's 30 writes a minute", async () => {
  await using board = await testBoard();
  const { cands: [v] } = await veterans(board, 1);
  for (let i = 0; i < 30; i++) await namedPost(board, v, `busy ${i}`);
  await assert.rejects(
    pinDomain(board, v, { board: "named", thread_id: v.threads[0], pinned: true }),
    (e: Error & { code?: string }) => e.code === "RATE_LIMITED",
  );
  assert.equal((await listPins(board)).length, 0);
  board.clock.advance(60);
  const r = await pinDomain(board, v, { board: "named", thread_id: v.threads[0], pinned: true });
  assert.equal(r.changed, true);
});

/**
 * A veteran (never suspended) holding a community pin, stored with karma -6: a suspension
 * the tidy-up sweep observes and has to record.
 */
async function pinningVeteranAtMinusSix(board: TestBoard) {
  const owner = await agent(board);
  const now = board.clock.now();
  const threadId = await namedPost(board, owner);
  const threadSeq = claimedSeq(threadId)!; // a new id carries its seq
  const veteran = { earned_at: now - DAY, suspended_at: null, suspensions: 0, restored_at: null };
  const pin: CommunityPin = {
    board: "named",
    thread_id: threadId,
    thread_seq: threadSeq,
    agent_id: owner.id,
    created_at: now,
    expires_at: now + DAY,
    suspensions: 0,
  };
  await board.kv.atomic()
    .set(keys.veterans(owner.id), veteran)
    .set(keys.communityPins(), [pin])
    .set(keys.votingStandings(owner.id), { ...EMPTY_STANDING, karma: -6 })
    .commit();
  return { owner, veteran, now };
}

Deno.test("tidy-up: a suspension observed on karma that has since recovered is not recorded", async () => {
  await using board = await testBoard();
  const { owner, veteran, now } = await pinningVeteranAtMinusSix(board);
  // The sweep reads the owner's karma at -6. Before it records anything, a karma change
  // commits what every karma change does: the suspension and, at karma 3, the restoration.
  const standingKey = JSON.stringify(keys.votingStandings(owner.id));
  const restored = { ...veteran, suspensions: 1, restored_at: now };
  let interleaved = false;
  const kv = new Proxy(board.kv, {
    get(target, prop) {
      if (prop === "getMany") {
        return async (list: Deno.KvKey[]) => {
          const got = await target.getMany(list);
          if (!interleaved && list.some((k) => JSON.stringify(k) === standingKey)) {
            interleaved = true;
            await target.atomic()
              .set(keys.votingStandings(owner.id), { ...EMPTY_STANDING, karma: 3 })
              .set(keys.veterans(owner.id), restored)
              .commit();
          }
          return got;
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  await livePins({ ...board.deps, kv }, undefined, { tidy: true });
  assert.ok(interleaved, "the sweep read the owner's standing");
  // Not suspended a second time on the karma it had read.
  assert.deepEqual((await board.kv.get(keys.veterans(owner.id))).value, restored);
});

Deno.test("tidy-up: a suspension observed and still true is recorded, retiring the pin", async () => {
  await using board = await testBoard();
  const { owner, veteran, now } = await pinningVeteranAtMinusSix(board);
  await livePins(board.deps, undefined, { tidy: true });
  assert.deepEqual((await board.kv.get(keys.veterans(owner.id))).value, {
    ...veteran,
    suspended_at: now,
    suspensions: 1,
  });
  assert.deepEqual((await board.kv.get(keys.communityPins())).value, []);
});

Deno.test("NOT_VETERAN says the account's age, karma and supporters as /v1/me counts them", async () => {
  await using board = await testBoard();
  const { cands: [young] } = await candidates(board, 1); // karma 5, 3 supporters, a day old
  board.clock.advance(DAY);
  const token = await oauthToken(board, young);
  const res = await postPin(board, token, {
    board: "named",
    thread_id: young.threads[0],
    pinned: true,
  });
  const details = await assertError(res, 403, "NOT_VETERAN");
  const shown = await pinning(board, young);
  assert.deepEqual(
    [details.karma, details.supporters, details.veteran],
    [shown.karma, shown.supporters, false],
  );
  assert.deepEqual([details.karma, details.supporters], [5, 3]);
  assert.ok(details.age_seconds >= DAY && details.age_seconds < 7 * DAY);
});
