import { AsyncLocalStorage } from "node:async_hooks";

/**
 * What one unit of work (a request) costs in KV calls: how many calls it made, how many
 * sequential round trips they took, and how many commits conflicted or had to be retried.
 * On Deno Deploy every call crosses the network, so the round trips are the latency a
 * request pays for KV (docs/architecture.md, "Round trips").
 *
 * A call issued while another of the same unit is still in flight joins that round trip;
 * a call issued when none is in flight starts the next one. A `list` counts one call for
 * each page it reads (its `batchSize` entries; each page waits for the one before).
 *
 * The service's KV handle (kv/versioned_kv.ts) reports every call to the meter that
 * `currentMeter()` names at that moment. Nothing is metered until a source is installed:
 * the telemetry middleware installs one per request span, tests install their own.
 */
export class KvMeter {
  calls = 0;
  roundTrips = 0;
  /** Commits refused because something they checked had changed. */
  conflicts = 0;
  /** Attempts run again after a conflict, and commits sent again after a busy store (kv/tx.ts). */
  retries = 0;
  /**
   * Of those, commits sent again because another process held the embedded store's write
   * lock (`database is locked`; a networked store has no such lock, and processes whose
   * commits take turns on one file never meet it: kv/commit_turns.ts): not a conflict.
   */
  busy = 0;
  #inFlight = 0;
  #queue: Held[] = [];
  #scheduled = false;

  /**
   * `lockstep` (tests): calls are held and sent together, one round at a time, as if every
   * round trip took the same time. A round is sent once the code issuing calls has nothing
   * left to do but wait, so the count is the dependency depth of the calls, the same on
   * every run, whatever the store's own timing.
   */
  constructor(readonly options: { lockstep?: boolean; trace?: boolean } = {}) {}

  /**
   * With `trace`, each round trip's calls: what was called and from where (the first stack
   * frame outside kv/), for finding the awaits a read plan can fold together.
   */
  readonly rounds: string[][] = [];

  /** Runs one KV call, counting it; `label` names it in a trace. */
  run<T>(call: () => Promise<T>, label = "call"): Promise<T> {
    this.calls++;
    if (this.options.trace) label = `${label} ${callSite()}`;
    if (this.options.lockstep) return this.#held(call, label);
    if (this.options.trace) {
      if (this.#inFlight === 0) this.rounds.push([]);
      this.rounds.at(-1)!.push(label);
    }
    if (this.#inFlight++ === 0) this.roundTrips++;
    return call().finally(() => this.#inFlight--);
  }

  #held<T>(call: () => Promise<T>, label: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ call, label, resolve, reject } as Held);
      if (!this.#scheduled) this.#schedule();
    });
  }

  /**
   * The next round goes once the issuing code has run to its next wait: a few macrotask turns,
   * so that work which crosses one (a stream's next chunk, the MCP SDK's dispatch) on a busy
   * machine still issues its calls with the round they do not depend on. A call that depends on
   * this round's answers cannot be issued before it is sent, so the count never falls below the
   * dependency depth.
   */
  #schedule(): void {
    this.#scheduled = true;
    let turns = SETTLE_TURNS;
    const turn = () => --turns > 0 ? setTimeout(turn, 0) : this.#round();
    setTimeout(turn, 0);
  }

  /** Sends every held call at once; answers all of them when all are back: one round trip. */
  async #round(): Promise<void> {
    const round = this.#queue;
    this.#queue = [];
    this.roundTrips++;
    if (this.options.trace) this.rounds.push(round.map((held) => held.label));
    const results = await Promise.allSettled(round.map((held) => held.call()));
    results.forEach((r, i) =>
      r.status === "fulfilled" ? round[i].resolve(r.value) : round[i].reject(r.reason)
    );
    this.#scheduled = false;
    if (this.#queue.length > 0) this.#schedule();
  }
}

/** Macrotask turns a lockstep round waits for calls issued with it. */
const SETTLE_TURNS = 3;

/** A call held for the next lockstep round. */
interface Held {
  call: () => Promise<unknown>;
  label: string;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** The first stack frame outside kv/ and the runtime: where a KV call was made. */
function callSite(): string {
  const frames = (new Error().stack ?? "").split("\n").slice(1);
  const frame = frames.find((f) => f.includes("file://") && !f.includes("/kv/"));
  const m = frame?.match(/file:\/\/.*?\/((?:domain|routes|oauth|mcp|cli|tests)\/[^)]*)/);
  return m ? m[1] : "?";
}

let source: () => KvMeter | undefined = () => undefined;

/** Set inside `unmetered` work: its calls report to no request's meter. */
const apart = new AsyncLocalStorage<true>();

/**
 * Runs `work` apart from the request that started it: its KV calls report to no meter.
 * For the work a write starts once its answer is decided (sealing a search batch, purging a
 * deleted thread's replies), which runs after the response in production: tests that wait
 * for it (the configuration's `background*` switches off) still count only what a request
 * waits for there.
 */
export function unmetered<T>(work: () => Promise<T>): Promise<T> {
  return apart.run(true, work);
}

/** Names the meter that KV calls made from now on report to (undefined: none). */
export function setMeterSource(fn: () => KvMeter | undefined): void {
  source = fn;
}

/** The meter of the work running now, if any. */
export function currentMeter(): KvMeter | undefined {
  return apart.getStore() ? undefined : source();
}

/** Runs one KV call, reporting it to the current meter; `label` names it in a trace. */
export function metered<T>(call: () => Promise<T>, label?: () => string): Promise<T> {
  const meter = currentMeter();
  return meter ? meter.run(call, meter.options.trace && label ? label() : undefined) : call();
}

/** Most entries one page of a `list` reads (Deno KV clamps `batchSize` to it). */
const MAX_LIST_BATCH = 500;

/**
 * Makes `pageRead` run each of `it`'s page reads: a page is read when the entries already read
 * are a whole number of pages (Deno KV's iterator reads `batchSize` entries a page, by default
 * `limit` or 100, and stops after a page that came back short or once `limit` entries were
 * read; a networked store sends each page apart). Answers `it`.
 */
export function onListPages<T>(
  it: Deno.KvListIterator<T>,
  options: Deno.KvListOptions | undefined,
  pageRead: <R>(read: () => Promise<R>) => Promise<R>,
): Deno.KvListIterator<T> {
  const batch = Math.min(options?.batchSize ?? options?.limit ?? 100, MAX_LIST_BATCH);
  const limit = options?.limit ?? Infinity;
  let read = 0;
  let done = false;
  const next = it.next.bind(it);
  it.next = async () => {
    const page = !done && read < limit && read % batch === 0;
    const r = page ? await pageRead(next) : await next();
    if (r.done) done = true;
    else read++;
    return r;
  };
  return it;
}
