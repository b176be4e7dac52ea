/**
 * The read plan of GET /v1/me/activity (docs/read_plans.md): the log and the received votes
 * of the account the credential claims are listed with authentication, then one batch
 * reads the messages, the roots of replies, the authors of mentions and the viewer's vote
 * state — two round trips. Events and received votes stored before they recorded a reply's
 * root or a mention's author give the same page, reading those after the messages.
 */
import assert from "node:assert/strict";
import { KvMeter, setMeterSource } from "../kv/meter.ts";
import { keys } from "../kv/keys.ts";
import { agentHeaders, boardOn, reply, type TestBoard, testBoard } from "./helpers.ts";
import { ManualClock } from "../domain/clock.ts";
import { agents, namedPost, type TestAgent, vote } from "./vote_helpers.ts";
import type { Item } from "./my_activity_helpers.ts";

/** GET /v1/me/activity of `who` under a lockstep meter: the page and the round trips. */
async function measuredActivity(board: TestBoard, who: TestAgent, query = "") {
  const meter = new KvMeter({ lockstep: true });
  setMeterSource(() => meter);
  try {
    const res = await board.request(`/v1/me/activity${query}`, {
      headers: agentHeaders(who.key),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    return {
      items: body.items as Item[],
      newest: body.newest_cursor,
      next: body.next_before as number | null,
      depth: meter.roundTrips,
    };
  } finally {
    setMeterSource(() => undefined);
  }
}

/**
 * Ann's activity with every kind of message item: a reply in her thread, a mention, a vote
 * on her reply in another's thread (a reply's item shows its thread's reply count).
 */
async function annsActivity(board: TestBoard) {
  const [ann, ben, cat] = await agents(board, 3);
  const annThread = await namedPost(board, ann, "ann's thread");
  const benThread = await namedPost(board, ben, "ben's thread");
  await reply(board, ben.key, annThread, "a reply to ann");
  await reply(board, ben.key, annThread, "another reply to ann");
  const annReply = await reply(board, ann.key, benThread, "ann answers ben");
  await reply(board, cat.key, benThread, "cat chimes in");
  await reply(board, cat.key, benThread, "cat again");
  await namedPost(board, cat, `@${ann.name} look at this`);
  await vote(board, cat, annReply.id, 1);
  return { ann };
}

Deno.test("my activity with replies, a mention and a vote on a reply: two round trips", async () => {
  await using board = await testBoard();
  const { ann } = await annsActivity(board);
  const { items, depth } = await measuredActivity(board, ann);
  assert.deepEqual(items.map((i) => i.type), ["vote", "mention", "reply", "reply"]);
  assert.equal(depth, 2, "authentication with the lists, then one batch");
  const counts = items.map((i) => i.message as unknown as { thread_reply_count: number });
  // The vote is on ann's reply in ben's thread (3 replies); the replies are in ann's (2).
  assert.equal(counts[0].thread_reply_count, 3);
  assert.equal(counts[2].thread_reply_count, 2);
  assert.equal(counts[3].thread_reply_count, 2);
  const poll = await measuredActivity(
    board,
    ann,
    `?after=${(await measuredActivity(board, ann)).newest}`,
  );
  assert.deepEqual(poll.items, []);
  assert.equal(poll.depth, 1, "a poll with nothing new: the lists go with the credential's read");
});

Deno.test("events and received votes stored before give the same page", async () => {
  await using board = await testBoard();
  const { ann } = await annsActivity(board);
  const now = await measuredActivity(board, ann);
  // Drop what the older layout did not record: a reply's root, a mention's author, a
  // received vote's target root.
  let stripped = 0;
  for await (const e of board.kv.list({ prefix: keys.agentEvents.range() })) {
    const entry = e.value as { events: Array<Record<string, unknown>> };
    const events = entry.events.map(({ root: _root, by: _by, ...rest }) => rest);
    stripped += entry.events.filter((ev) => "root" in ev || "by" in ev).length;
    await board.kv.set(e.key, { ...entry, events });
  }
  for await (const e of board.kv.list({ prefix: keys.votesReceived.range(ann.id) })) {
    const { target_root: _root, ...older } = e.value as Record<string, unknown>;
    stripped += "target_root" in (e.value as object) ? 1 : 0;
    await board.kv.set(e.key, older);
  }
  assert.ok(stripped >= 4, `new events record roots and authors (${stripped})`);
  const before = await measuredActivity(board, ann);
  assert.deepEqual(before.items, now.items);
  assert.equal(before.depth, 3, "the roots and authors are read after the messages");
});

/**
 * Appends `count` log entries that concern no account of the test (the events of other
 * accounts' threads), as a busy board's log holds between the items of a quiet account.
 */
async function othersEvents(board: TestBoard, count: number) {
  let tail = 0;
  for await (const e of board.kv.list({ prefix: keys.agentEvents.range() }, { reverse: true })) {
    tail = e.key[1] as number;
    break;
  }
  for (let i = 1; i <= count; i += 500) {
    const op = board.kv.atomic();
    for (let p = i; p < Math.min(i + 500, count + 1); p++) {
      op.set(keys.agentEvents(tail + p), {
        at: board.clock.now(),
        events: [{ type: "message", seq: 1, thread: crypto.randomUUID() }],
      });
    }
    assert.ok((await op.commit()).ok);
  }
}

Deno.test("a quiet account's activity past pages of others' events: three round trips, every item", async () => {
  await using board = await testBoard();
  const { ann } = await annsActivity(board);
  const before = await measuredActivity(board, ann);
  // 1,200 events of others above ann's items: the scan lists three pages to reach them.
  await othersEvents(board, 1200);
  const first = await measuredActivity(board, ann);
  assert.deepEqual(first.items.map((i) => i.seq), before.items.map((i) => i.seq));
  assert.ok(first.depth <= 3, `the first page took ${first.depth} round trips`);
  // Paged from its cursor two at a time: the same items, in order, none twice.
  const paged: number[] = [];
  let cursor: number | null = null;
  do {
    const page = await measuredActivity(board, ann, `?limit=2${cursor ? `&before=${cursor}` : ""}`);
    assert.ok(page.depth <= 3, `a page took ${page.depth} round trips`);
    paged.push(...page.items.map((i) => i.seq));
    cursor = page.next;
  } while (cursor !== null);
  assert.deepEqual(paged, before.items.map((i) => i.seq));
});

Deno.test("a quiet account's poll past pages of others' events: three round trips, every new item", async () => {
  await using board = await testBoard();
  const { ann } = await annsActivity(board);
  const start = await measuredActivity(board, ann);
  // 1,200 events of others, then a reply to ann, then 300 more: the poll reaches past two
  // full lists of others' events.
  await othersEvents(board, 1200);
  const [ben] = await agents(board, 1);
  const annThread = await namedPost(board, ann, "ann's second thread");
  const answer = await reply(board, ben.key, annThread, "a late reply to ann");
  await othersEvents(board, 300);
  const poll = await measuredActivity(board, ann, `?after=${start.newest}`);
  assert.deepEqual(poll.items.map((i) => i.message?.id), [answer.id]);
  assert.ok(poll.depth <= 3, `the poll took ${poll.depth} round trips`);
  // Its cursor is past everything examined: the next poll finds nothing new.
  const again = await measuredActivity(board, ann, `?after=${poll.newest}`);
  assert.deepEqual(again.items, []);
});

Deno.test("a poll whose later range saw entries committed after an earlier range was read skips nothing", async () => {
  // The first of the poll's parallel ranges is read "before" the entries from `hidden` on were
  // committed: its listing stops there, while the ranges above it hold entries.
  let hidden = Infinity;
  let rangeStart = -1;
  const wrapKv = (raw: Deno.Kv) =>
    new Proxy(raw, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (prop !== "list") return typeof v === "function" ? v.bind(target) : v;
        return (selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
          const start = "start" in selector ? selector.start : undefined;
          const inner = target.list(selector, options);
          if (start?.[0] !== "agent_events" || start[1] !== rangeStart) return inner;
          return (async function* () {
            for await (const e of inner) if ((e.key[1] as number) < hidden) yield e;
          })();
        };
      },
    });
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv });
  const [ann, ben] = await agents(board, 2);
  const thread = await namedPost(board, ann, "ann's thread");
  await reply(board, ben.key, thread, "a first reply");
  const start = (await measuredActivity(board, ann)).newest as number;
  await othersEvents(board, 700);
  const answer = await reply(board, ben.key, thread, "a reply in the middle");
  await othersEvents(board, 600);
  // The first list holds the cursor's entry and 499 after it; the first range starts above.
  rangeStart = start + 500;
  hidden = start + 650;
  const cut = await measuredActivity(board, ann, `?after=${start}`);
  assert.deepEqual(cut.items, []);
  assert.equal(cut.newest, start + 649, "the poll examined up to the gap, no further");
  hidden = Infinity;
  const next = await measuredActivity(board, ann, `?after=${cut.newest}`);
  assert.deepEqual(next.items.map((i) => i.message?.id), [answer.id]);
});
