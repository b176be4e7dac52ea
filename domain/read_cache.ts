/**
 * The read cache: whole answers of the hot reads (feed and activity pages,
 * thread reads, searches), kept as JSON text per viewer and per query, and served again
 * only while nothing they were built from can have changed:
 *
 * - the versionstamp of the read-version key (kv/keys.ts) is the one the answer
 *   was built under. Every commit that changes anything a cached read shows bumps it in
 *   the same atomic, so a change on this instance or any other is seen by the next
 *   request's version read;
 * - the clock has not reached the earliest time the answer changes by time alone (pin
 *   expiry, the UTC day, account age thresholds, pending articles falling due, votes
 *   settling), which the domain reports while computing it (domain/read_scope.ts).
 *
 * The versions are read before anything the answer is built from (in the same read as the
 * caller's credential, domain/accounts/agents.ts), so an entry is never tagged with versions newer
 * than its data. Memory is bounded by a byte budget (see `ReadCache`).
 */
import { READ_VERSION_KEY } from "../kv/keys.ts";
import { isVersioned, onCommit } from "../kv/versioned_kv.ts";
import { unwrittenSince, writeMark } from "./own_writes.ts";
import { trackRead } from "./read_scope.ts";

/** The caller of a cached read: one object per request (its account record). */
type Agent = { readonly id: string };
/** What the cache needs of the service's dependencies (domain/deps.ts `Deps`). */
type Deps = { readonly kv: Deno.Kv; readonly clock: { now(): number } };

/** The version keys a cached read is validated by (kv/keys.ts: one shared key). */
export function versionKeys(): Deno.KvKey[] {
  return [READ_VERSION_KEY];
}

/** The versionstamps of version-key entries, as one comparable string. */
function stampsOf(entries: readonly { versionstamp: string | null }[]): string {
  let s = "";
  for (const e of entries) s += (e.versionstamp ?? "-") + ",";
  return s;
}

interface Snapshot {
  stamps: string;
  mark: number;
}

/** Versions read together with a caller's credential, waiting for that request's read. */
const snapshots = new WeakMap<Agent, Snapshot>();

/**
 * Attaches the versions read with the caller's credential to the agent record of that
 * request; `mark` is the own-write mark taken before the read (domain/own_writes.ts).
 */
export function attachSnapshot(
  agent: Agent,
  entries: Deno.KvEntryMaybe<unknown>[],
  mark: number,
): void {
  snapshots.set(agent, { stamps: stampsOf(entries), mark });
}

/** The current version stamps for a read by `viewer`: the attached ones (once), or read now. */
async function currentStamps(deps: Deps, viewer: Agent | null): Promise<string> {
  if (viewer) {
    const s = snapshots.get(viewer);
    snapshots.delete(viewer);
    // Reused only if the account wrote nothing since: a request sees its own writes.
    if (s && unwrittenSince(viewer.id, s.mark)) return s.stamps;
  }
  return stampsOf(await deps.kv.getMany(versionKeys()));
}

/** Takes the own-write mark for a snapshot about to be read (see `attachSnapshot`). */
export const snapshotMark = writeMark;

interface Entry {
  stamps: string;
  /** Valid for clock times in [from, until). */
  from: number;
  until: number;
  json: string;
  /** Served since it was last passed over for eviction (second-chance LRU). */
  recent?: boolean;
}

/** Default byte budget of one instance's read cache. */
const READ_CACHE_BYTES = 24 * 1024 * 1024;

/**
 * Whole answers by viewer and query. Past the byte budget, entries go in insertion order,
 * except that one served since it was last passed over gets a second chance (a hit marks
 * the entry instead of reordering the map, so a hit allocates nothing).
 */
export class ReadCache {
  #entries = new Map<string, Entry>();
  #bytes = 0;
  /** Computations under way, so concurrent identical misses compute once. */
  readonly inFlight = new Map<string, Promise<{ entry: Entry; cacheable: boolean }>>();
  /** Answers served from the cache, and answers computed (for tests and benchmarks). */
  readonly stats = { hits: 0, computed: 0 };
  /** The newest version stamps seen: entries built under older ones can never be served. */
  #latest = "";
  constructor(readonly maxBytes = READ_CACHE_BYTES) {}

  /**
   * Notes the stamps a read found. Versionstamps only grow (and compare as strings), so
   * on newer stamps every entry is dead: the cache empties instead of keeping them until
   * they are evicted. Returns false for stamps older than the newest seen.
   */
  advance(stamps: string): boolean {
    if (stamps === this.#latest) return true;
    if (stamps < this.#latest) return false;
    this.#latest = stamps;
    this.#entries.clear();
    this.#bytes = 0;
    return true;
  }

  /** The newest version stamps seen so far ("" before any). */
  get latest(): string {
    return this.#latest;
  }

  get(key: string): Entry | undefined {
    const e = this.#entries.get(key);
    if (e) e.recent = true;
    return e;
  }

  set(key: string, e: Entry): void {
    this.delete(key);
    const size = (key.length + e.json.length) * 2;
    if (size > this.maxBytes / 8) return;
    this.#entries.set(key, e);
    this.#bytes += size;
    while (this.#bytes > this.maxBytes) {
      const [oldestKey, oldest] = this.#entries.entries().next().value!;
      if (oldest.recent && oldestKey !== key) {
        oldest.recent = false;
        this.#entries.delete(oldestKey);
        this.#entries.set(oldestKey, oldest);
      } else this.delete(oldestKey);
    }
  }

  delete(key: string): void {
    const e = this.#entries.get(key);
    if (!e) return;
    this.#entries.delete(key);
    this.#bytes -= (key.length + e.json.length) * 2;
  }

  /** Bytes held (approximate: two per character). */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }
}

const caches = new WeakMap<Deps, ReadCache>();
/** The read caches of each KV handle (several instances may share one in a process). */
const cachesOfKv = new WeakMap<Deno.Kv, Set<ReadCache>>();

/** The read cache of the instance `deps` belongs to. */
export function readCache(deps: Deps): ReadCache {
  let c = caches.get(deps);
  if (!c) {
    caches.set(deps, c = new ReadCache());
    let set = cachesOfKv.get(deps.kv);
    if (!set) cachesOfKv.set(deps.kv, set = new Set());
    set.add(c);
  }
  return c;
}

// A commit that bumped the read version through a handle makes its versionstamp the newest
// version its caches know: every read that starts after it sees it (`cachedReadEarly`).
/** The versions of the newest commit that bumped them, by the handle it went through. */
const committed = new WeakMap<Deno.Kv, string>();

onCommit((_, commit) => {
  if (!commit.bumped) return;
  const stamps = stampsOf([commit]);
  if (stamps > (committed.get(commit.kv) ?? "")) committed.set(commit.kv, stamps);
  for (const cache of cachesOfKv.get(commit.kv) ?? []) cache.advance(stamps);
});

/**
 * The newest versions this instance knows every read it starts now will see: the newest a
 * version read found, or a commit it made stamped.
 */
function knownVersions(deps: Deps, cache: ReadCache): string {
  const made = committed.get(deps.kv) ?? "";
  return made > cache.latest ? made : cache.latest;
}

/**
 * The JSON text of a read by `viewer` (null: no account) identified by `key` (which must
 * name every input of `compute` but the viewer): the cached text when it was built under
 * the current versions and the clock has not reached its change time, otherwise the text
 * of a fresh `compute()`, kept when the domain found nothing that forbids it.
 */
async function cachedRead(
  deps: Deps,
  viewer: Agent | null,
  key: string,
  compute: () => Promise<unknown>,
): Promise<string> {
  // Only a versioned handle guarantees every write is seen (kv/versioned_kv.ts).
  if (!isVersioned(deps.kv)) return JSON.stringify(await compute());
  const cache = readCache(deps);
  const cacheKey = `${viewer?.id ?? "-"}\u0000${key}`;
  const stamps = await currentStamps(deps, viewer);
  cache.advance(stamps);
  const fits = (e: Entry) => {
    const now = deps.clock.now();
    return e.stamps === stamps && e.from <= now && now < e.until;
  };
  const hit = cache.get(cacheKey);
  if (hit && fits(hit)) {
    cache.stats.hits++;
    return hit.json;
  }
  const flightKey = `${cacheKey}\u0000${stamps}`;
  const running = cache.inFlight.get(flightKey);
  if (running) {
    const done = await running.catch(() => null);
    if (done?.cacheable && fits(done.entry)) {
      cache.stats.hits++;
      return done.entry.json;
    }
  }
  const work = (async () => {
    cache.stats.computed++;
    const from = deps.clock.now();
    const { value, scope } = await trackRead(compute);
    const entry: Entry = { stamps, from, until: scope.changesAt, json: JSON.stringify(value) };
    const cacheable = scope.cacheable && entry.until > from;
    // Built under stamps older than the newest seen: valid for this request, dead for later.
    if (cacheable && cache.advance(stamps)) cache.set(cacheKey, entry);
    else cache.delete(cacheKey);
    return { entry, cacheable };
  })();
  if (!running) cache.inFlight.set(flightKey, work);
  try {
    return (await work).entry.json;
  } finally {
    if (cache.inFlight.get(flightKey) === work) cache.inFlight.delete(flightKey);
  }
}

/** Why a computation started early was dropped: the cache answered, or the caller was refused. */
class NotNeeded extends Error {}

/**
 * `cachedRead` for a read whose first KV batch goes out before its caller is known: while
 * the credential resolves (`viewerReady`), or beside the version read of a request without
 * one. `compute` starts at once, inside the read's time tracking; it issues what needs no
 * caller, then awaits the viewer it is handed, which is given only on a cache miss (on a
 * hit the computation stops there, having read only its first batch).
 *
 * An answer is kept only when its reads are known to be no older than the versions it is
 * kept under: the versions found now must equal the newest this instance had seen before
 * the first reads went out (then no change was committed between that version read, which
 * ended before them, and this one). Otherwise the answer is served, not kept; the next
 * request, with the versions known, keeps its own. A commit made through this instance's
 * handle makes its versions known at once (`onCommit` above).
 *
 * `likely`: the caller the request probably has (null: none; undefined: not known), so
 * that a request the cache probably answers waits for its caller first and reads nothing
 * more (`cachedRead`); the first reads are only started for a probable miss.
 */
export async function cachedReadEarly<V extends Agent>(
  deps: Deps,
  viewerReady: V | null | Promise<V | null>,
  key: string,
  compute: (viewer: Promise<V | null>) => Promise<unknown>,
  likely?: string | null,
): Promise<string> {
  if (!isVersioned(deps.kv)) {
    return JSON.stringify(await compute(Promise.resolve(viewerReady)));
  }
  const cache = readCache(deps);
  const seen = knownVersions(deps, cache);
  if (likely !== undefined) {
    // The caller is probably `likely` (null: no account), whose answer the cache holds under
    // the newest versions seen: wait for the caller instead of reading what it holds.
    const held = cache.get(`${likely ?? "-"}\u0000${key}`);
    const now = deps.clock.now();
    if (held && held.stamps === seen && held.from <= now && now < held.until) {
      const viewer = await viewerReady;
      return await cachedRead(deps, viewer, key, () => compute(Promise.resolve(viewer)));
    }
  }
  const from = deps.clock.now();
  let open!: (viewer: V | null) => void;
  let drop!: (reason: unknown) => void;
  const gate = new Promise<V | null>((resolve, reject) => {
    open = resolve;
    drop = reject;
  });
  gate.catch(() => {}); // dropped before the computation awaited it
  const work = trackRead(() => compute(gate));
  // Dropped (a hit, a refused credential): its rejection is expected, never reported.
  work.catch(() => {});
  let viewer: V | null;
  let stamps: string;
  try {
    viewer = await viewerReady;
    stamps = await currentStamps(deps, viewer);
  } catch (e) {
    drop(new NotNeeded());
    throw e;
  }
  cache.advance(stamps);
  const cacheKey = `${viewer?.id ?? "-"}\u0000${key}`;
  const fits = (e: Entry) => {
    const now = deps.clock.now();
    return e.stamps === stamps && e.from <= now && now < e.until;
  };
  const hit = cache.get(cacheKey);
  if (hit && fits(hit)) {
    drop(new NotNeeded());
    cache.stats.hits++;
    return hit.json;
  }
  // The same answer being computed under the same versions (requests alike, arriving
  // together after a write): this request's computation stops after its first batch and
  // the answer is shared, as `cachedRead` shares it.
  const flightKey = `${cacheKey}\u0000${stamps}`;
  const running = cache.inFlight.get(flightKey);
  if (running) {
    drop(new NotNeeded());
    const done = await running.catch(() => null);
    if (done?.cacheable && fits(done.entry)) {
      cache.stats.hits++;
      return done.entry.json;
    }
    return await cachedRead(deps, viewer, key, () => compute(Promise.resolve(viewer)));
  }
  const job = (async () => {
    cache.stats.computed++;
    open(viewer);
    const { value, scope } = await work;
    const entry: Entry = { stamps, from, until: scope.changesAt, json: JSON.stringify(value) };
    const cacheable = scope.cacheable && entry.until > from && stamps === seen;
    if (cacheable && cache.advance(stamps)) cache.set(cacheKey, entry);
    else cache.delete(cacheKey);
    return { entry, cacheable };
  })();
  cache.inFlight.set(flightKey, job);
  try {
    return (await job).entry.json;
  } finally {
    if (cache.inFlight.get(flightKey) === job) cache.inFlight.delete(flightKey);
  }
}
