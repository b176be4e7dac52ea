/**
 * Which pins are live, decided at read time by comparing stored facts with the clock and
 * with the owners' current state, so an expired or retired pin never shows whether or not
 * any tidy-up has run. A community pin is live while: now < expires_at, its owner is
 * active, its owner's pin rights are not suspended (stored, or karma <= -5 now) and were not
 * suspended since it was made, and its thread still exists. An official notice is live
 * while its thread exists. Reads never write: dead pins are dropped from storage by the
 * tidy-up sweep (and retired by the commits that kill them).
 */
import { readNamed } from "../../kv/read_many.ts";
import { type Board, keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import type { Agent } from "../accounts/mod.ts";
import { reached } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { invalidInput, notFound } from "../errors.ts";
import { limitSpec } from "../limits/mod.ts";
import { EMPTY_STANDING } from "../votes/mod.ts";
import {
  type BoardHead,
  EMPTY_HEAD,
  isHidden,
  type MessageRecord,
  threadUrl,
} from "../board/mod.ts";
import { type CommunityPin, type OfficialPin, samePin } from "./book.ts";
import { notePinBook } from "./book_hint.ts";
import { isSuspended, recordObservedSuspension, type VeteranRecord } from "./veterans.ts";

export const PIN_LIMITS = {
  community_slots: 3,
  active_per_veteran: 1,
  new_per_utc_day: 1,
  lifetime_seconds: 7 * 86400,
  official_per_board: 20,
} as const;

/**
 * New community pins per account per UTC day, as a limit: one of the rules that shape the pinned
 * notices (with the slots and the lifetime), so `BOARD_LIMIT_SCALE` leaves it.
 */
export const NEW_PINS_LIMIT = {
  ...limitSpec("account_new_pins_per_day", PIN_LIMITS.new_per_utc_day, "account", "utc_day"),
  unscaled: true,
} as const;

/** What decides whether an owner's pins are live. */
export interface OwnerFacts {
  agent: Agent | null;
  karma: number;
  veteran: VeteranRecord | null;
}

/** True when a community pin is live at `now` given its owner's facts and its thread. */
export function communityPinLive(
  p: CommunityPin,
  owner: OwnerFacts | undefined,
  threadAlive: boolean,
  now: number,
): boolean {
  if (!threadAlive) return false;
  if (!owner?.agent || owner.agent.status !== "active" || !owner.veteran) return false;
  if (isSuspended(owner.veteran, owner.karma)) return false;
  return owner.veteran.suspensions <= p.suspensions && !reached(now, p.expires_at);
}

/** Reads the facts of several owners (no checks): agent, karma, veteran record. */
export async function readOwnerFacts(
  kv: Deno.Kv,
  agentIds: string[],
): Promise<Map<string, OwnerFacts>> {
  const ids = [...new Set(agentIds)];
  const read = await readNamed(kv, {
    agents: ids.map((id) => keys.agents(id)),
    standings: ids.map((id) => keys.votingStandings(id)),
    veterans: ids.map((id) => keys.veterans(id)),
  });
  const out = new Map<string, OwnerFacts>();
  ids.forEach((id, i) => {
    out.set(id, {
      agent: read.agents[i].value,
      karma: (read.standings[i].value ?? EMPTY_STANDING).karma,
      veteran: read.veterans[i].value,
    });
  });
  return out;
}

/** `board:seq` of a pinned thread. */
export function threadKey(p: { board: Board; thread_seq: number }): string {
  return `${p.board}:${p.thread_seq}`;
}

/**
 * Reads the pinned threads' records (no checks): live ones only, keyed by `threadKey`.
 * `heads`: the boards' heads when the caller has read them already (else read here first).
 */
export async function readPinnedThreads(
  kv: Deno.Kv,
  pins: readonly { board: Board; thread_id: string; thread_seq: number }[],
  heads?: ReadonlyMap<Board, BoardHead>,
): Promise<Map<string, MessageRecord>> {
  if (pins.length === 0) return new Map();
  const boards = [...new Set(pins.map((p) => p.board))];
  // The heads (unless given) and the records go out in one batch: the record keys need
  // nothing from the heads.
  const read = await readNamed(kv, {
    heads: heads ? null : boards.map((b) => keys.boardHeads(b)),
    records: pins.map((p) => keys.messages(p.board, p.thread_seq)),
  });
  const headOf = heads ??
    new Map(boards.map((b, i) => [b, read.heads?.[i].value ?? EMPTY_HEAD]));
  const out = new Map<string, MessageRecord>();
  pins.forEach((p, i) => {
    const m = read.records[i].value;
    if (m && m.id === p.thread_id && m.kind === "root" && !isHidden(m, headOf.get(p.board)!)) {
      out.set(threadKey(p), m);
    }
  });
  return out;
}

/** The thread a pin names: a live root thread of `board`, or 404 / 400. */
export function pinTarget(
  rec: MessageRecord | null,
  head: BoardHead,
  threadId: string,
): MessageRecord {
  if (!rec || rec.id !== threadId || isHidden(rec, head)) throw notFound("thread", threadId);
  if (rec.kind !== "root") {
    throw invalidInput("thread_id", `Only root threads can be pinned; "${threadId}" is a reply.`);
  }
  return rec;
}

/** A live pin with what its views need. */
export type LivePin =
  | { kind: "official"; pin: OfficialPin; thread: MessageRecord }
  | { kind: "community"; pin: CommunityPin; thread: MessageRecord; owner: Agent };

/**
 * The live pins of one board (or both), in display order: the rules thread, other official
 * notices newest first, then community pins newest first. With `tidy` (the sweep only),
 * dead pins are dropped from storage and observed suspensions recorded (a pin's death is
 * permanent, so this never removes a live pin); a read writes nothing. With
 * `communityOnly`, only the live community pins: official notices are read only to leave
 * out a community pin on an officially pinned thread, so without community pins nothing is
 * read after the pin lists. Two round trips at most: the pin lists, then the owners'
 * facts with the threads and board heads.
 */
export async function livePins(
  deps: Deps,
  board?: Board,
  opts: { tidy?: boolean; communityOnly?: boolean } = {},
): Promise<LivePin[]> {
  return await livePinsOf(deps, await readPinBook(deps.kv, board), opts);
}

/** The stored pins of one board (or both): what `livePinsOf` decides from. */
export interface PinBook {
  boards: Board[];
  officials: OfficialPin[];
  /** The community pins of `boards`. */
  community: CommunityPin[];
}

/** Reads the stored pins of one board (or both) in one `getMany`. */
export async function readPinBook(kv: Deno.Kv, board?: Board): Promise<PinBook> {
  const boards: Board[] = board ? [board] : ["named", "b"];
  const { community, officials } = await readNamed(kv, {
    community: keys.communityPins(),
    officials: boards.map((b) => keys.officialPins(b)),
  });
  notePinBook(kv, community.value ?? []);
  return {
    boards,
    officials: officials.flatMap((l) => l.value ?? []),
    community: (community.value ?? []).filter((p) => boards.includes(p.board)),
  };
}

/**
 * The live pins of a pin book read before (`readPinBook`), as `livePins` answers them: the
 * threads and owners it names are read in one round trip. `communityOnly`: official notices
 * only where they share a thread with a community pin (what `/v1/me` needs).
 */
export async function livePinsOf(
  deps: Deps,
  book: PinBook,
  opts: { tidy?: boolean; communityOnly?: boolean } = {},
): Promise<LivePin[]> {
  const { officials, community: pins } = book;
  const communityThreads = new Set(pins.map(threadKey));
  const notices = opts.communityOnly
    ? officials.filter((p) => communityThreads.has(threadKey(p)))
    : officials;
  const [owners, threads] = await Promise.all([
    readOwnerFacts(deps.kv, pins.map((p) => p.agent_id)),
    readPinnedThreads(deps.kv, [...notices, ...pins]),
  ]);
  const now = deps.clock.now();
  const officialLive: LivePin[] = notices
    .filter((p) => threads.has(threadKey(p)))
    .sort((a, b) => Number(b.rules) - Number(a.rules) || b.created_at - a.created_at)
    .map((pin) => ({ kind: "official", pin, thread: threads.get(threadKey(pin))! }));
  const officialThreads = new Set(officialLive.map((p) => threadKey(p.pin)));
  const dead: CommunityPin[] = [];
  const communityLive: LivePin[] = [];
  for (const p of pins) {
    const owner = owners.get(p.agent_id);
    if (!communityPinLive(p, owner, threads.has(threadKey(p)), now)) dead.push(p);
    else if (!officialThreads.has(threadKey(p))) {
      communityLive.push({
        kind: "community",
        pin: p,
        thread: threads.get(threadKey(p))!,
        owner: owner!.agent!,
      });
    }
  }
  communityLive.sort((a, b) => b.pin.created_at - a.pin.created_at);
  if (opts.tidy) await tidyPins(deps, owners, dead);
  return opts.communityOnly ? communityLive : [...officialLive, ...communityLive];
}

/** Records suspensions observed and drops dead community pins (the sweep's tidy-up). */
async function tidyPins(deps: Deps, owners: Map<string, OwnerFacts>, dead: CommunityPin[]) {
  for (const [id, o] of owners) {
    if (o.veteran && o.veteran.suspended_at === null && isSuspended(o.veteran, o.karma)) {
      await recordObservedSuspension(deps, id);
    }
  }
  if (dead.length) await dropDeadPins(deps, dead);
}

/** Removes community pins known to be dead (tidy-up only; reads never depend on it). */
async function dropDeadPins(deps: Deps, dead: CommunityPin[]): Promise<void> {
  await transact(deps.kv, async (tx) => {
    const pins = (await tx.get(keys.communityPins())).value ?? [];
    const kept = pins.filter((p) => !dead.some((d) => samePin(p, d)));
    if (kept.length !== pins.length) tx.set(keys.communityPins(), kept);
  });
}

/** Who made a pin, as shown publicly. */
export function pinnedBy(p: LivePin) {
  if (p.kind === "community") return { type: "agent", agent_id: p.owner.id, name: p.owner.name };
  return { type: p.pin.created_by, name: p.pin.created_by };
}

/** The pin metadata of GET /pins (no bodies, no previews). */
export function pinView(deps: Deps, p: LivePin) {
  const t = p.thread;
  return {
    kind: p.kind,
    board: t.board,
    thread_id: t.id,
    seq: t.seq,
    title: t.title ?? "", // a pinned thread is a root, and every root has a title
    topic: t.topic,
    author: t.author,
    ...(t.board === "named" ? { agent_id: t.agent_id } : {}),
    reply_count: t.reply_count,
    score: t.score,
    thread_created_at: t.created_at,
    pinned_at: p.pin.created_at,
    expires_at: p.kind === "community" ? p.pin.expires_at : null,
    pinned_by: pinnedBy(p),
    rules: p.kind === "official" && p.pin.rules,
    url: threadUrl(deps, t.board, t.id),
  };
}

/** GET /pins: the live pins of a board, metadata only. */
export async function listPins(deps: Deps, board: Board) {
  const pins = await livePins(deps, board);
  return {
    board,
    pins: pins.map((p) => pinView(deps, p)),
    limits: PIN_LIMITS,
    as_of: deps.clock.now(),
  };
}
