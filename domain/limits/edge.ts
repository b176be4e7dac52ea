/**
 * Edge limits (spec: "approximate and location-scoped"): counted in memory per service
 * instance, never a KV read or write. Credential-bearing calls per network and per
 * credential, the authenticated API ceiling (moderator calls, on `/mod`, never come here: they
 * keep reserved admission), the
 * lookup budget for credentials this instance has not validated lately (spent only by
 * lookups that succeed), every lookup per network (so no one network can spend that
 * budget), failed lookups per network, and validated registrations. Each counter is a
 * sliding one-minute estimate over two fixed windows.
 */
import { BoardError } from "../errors.ts";
import type { Deps } from "../deps.ts";
import { limitExceeded, limitOf, LIMITS, type LimitSpec, wholeSeconds } from "./rates.ts";

const WINDOW_MS = 60_000;

/**
 * Per-key event counts over a sliding minute, estimated from the current and the
 * previous fixed minute (previous count weighted by the share of it still inside the
 * last 60 s). Memory: only keys seen in those two minutes are held; older ones are
 * dropped wholesale when the window rolls.
 */
export class MinuteCounter {
  #start = Number.NEGATIVE_INFINITY;
  #curr = new Map<string, number>();
  #prev = new Map<string, number>();

  #roll(nowMs: number): void {
    const start = Math.floor(nowMs / WINDOW_MS) * WINDOW_MS;
    if (start === this.#start) return;
    this.#prev = start - this.#start === WINDOW_MS ? this.#curr : new Map();
    this.#curr = new Map();
    this.#start = start;
  }

  /** Milliseconds until one more event for `key` fits under `limit`; 0 when it fits now. */
  wait(key: string, nowMs: number, limit: number): number {
    this.#roll(nowMs);
    const elapsed = nowMs - this.#start;
    const p = this.#prev.get(key) ?? 0;
    const c = this.#curr.get(key) ?? 0;
    // p * (1 - elapsed / W) + c + 1 <= limit, kept in integers (times W).
    if (p * (WINDOW_MS - elapsed) + (c + 1) * WINDOW_MS <= limit * WINDOW_MS) return 0;
    if (c + 1 <= limit) {
      // Wait until enough of the previous minute has slid out.
      const slid = (WINDOW_MS * (p - (limit - 1 - c))) / p;
      return Math.max(1, Math.ceil(slid - elapsed));
    }
    // Wait for the next minute, where this minute's count becomes the weighted part.
    const slid = (WINDOW_MS * (c - (limit - 1))) / c;
    return WINDOW_MS - elapsed + Math.max(1, Math.ceil(slid));
  }

  /** Counts one event for `key`. */
  add(key: string, nowMs: number): void {
    this.#roll(nowMs);
    this.#curr.set(key, (this.#curr.get(key) ?? 0) + 1);
  }

  /** Takes back one event counted for `key` at `atMs` (if its minute is still held). */
  take(key: string, atMs: number): void {
    const start = Math.floor(atMs / WINDOW_MS) * WINDOW_MS;
    const map = start === this.#start
      ? this.#curr
      : start === this.#start - WINDOW_MS
      ? this.#prev
      : null;
    const n = map?.get(key) ?? 0;
    if (n > 1) map!.set(key, n - 1);
    else if (n === 1) map!.delete(key);
  }

  /**
   * True when `key` is counted this minute already, or fewer than `most` keys are. A caller
   * counting keys anyone can make up (networks) bounds its memory this way: it counts what
   * this refuses under one key of its own.
   */
  counts(key: string, nowMs: number, most: number): boolean {
    this.#roll(nowMs);
    return this.#curr.has(key) || this.#curr.size < most;
  }

  /** True when `key` had an event in the current or previous minute. */
  seen(key: string, nowMs: number): boolean {
    this.#roll(nowMs);
    return this.#curr.has(key) || this.#prev.has(key);
  }

  /** Keys held (both minutes): bounded by the events admitted in two minutes. */
  get size(): number {
    return this.#curr.size + this.#prev.size;
  }
}

/**
 * A short, non-reversible id of a credential (53-bit FNV-style hash), so raw keys and
 * tokens are never kept in the limiter's maps. A collision only merges two counters.
 */
function credentialId(credential: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < credential.length; i++) {
    const ch = credential.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/**
 * One admitted call, to be settled once its credential is resolved: `bucket` is the
 * network's allowance it was counted in, `lookup` whether it needed a credential lookup.
 */
export interface Admission {
  id: string;
  bucket: string;
  /** The call counted a lookup against the budget (the first in flight for its credential). */
  lookup: boolean;
  /** The credential was not validated lately: it waits on a lookup (its own or another's). */
  unvalidated: boolean;
  atMs: number;
}

/** The edge limits of one service instance. */
class EdgeLimiter {
  readonly #deps: Deps;
  readonly networks = new MinuteCounter();
  readonly credentials = new MinuteCounter();
  readonly ceiling = new MinuteCounter();
  readonly lookups = new MinuteCounter();
  readonly failedLookups = new MinuteCounter();
  /** Every lookup per network allowance, successful ones too: never taken back. */
  readonly networkLookups = new MinuteCounter();
  readonly validatedCredentials = new MinuteCounter();
  readonly registrations = new MinuteCounter();
  /** Lookups in flight per credential id: concurrent first calls of one key count once. */
  readonly #inFlight = new Map<string, number>();

  constructor(deps: Deps) {
    this.#deps = deps;
  }

  #refuse(spec: LimitSpec, size: number, waitMs: number, message: string): never {
    throw limitExceeded(
      "RATE_LIMITED",
      spec,
      size,
      message,
      wholeSeconds(waitMs),
      this.#deps.clock.now(),
    );
  }

  #check(counter: MinuteCounter, key: string, spec: LimitSpec, nowMs: number, message: string) {
    const size = limitOf(this.#deps, spec);
    const wait = counter.wait(key, nowMs, size);
    if (wait > 0) this.#refuse(spec, size, wait, message.replace("{n}", String(size)));
  }

  /**
   * Admits one credential-bearing call from the network allowance `bucket` (routes/http.ts
   * `callBucket`) or throws 429 RATE_LIMITED; settle the returned admission with `settle`.
   * Refused calls are not counted. A credential this instance has not validated lately needs a
   * lookup: it is counted against the bucket's lookups (for good) and, until settled, both
   * against the instance's lookup budget and the bucket's failed lookups; the settlement
   * keeps only one of the two (a success stays in the budget, a failure in the bucket), so
   * failed lookups never spend the instance budget.
   * Concurrent calls of one credential share the lookup in flight (each failure still counts).
   */
  admitCall(bucket: string, credential: string): Admission {
    const nowMs = this.#deps.clock.nowMs();
    const id = credentialId(credential);
    const { unvalidated, lookup } = this.#admissible(bucket, id, nowMs);
    if (lookup) {
      this.lookups.add("*", nowMs);
      this.networkLookups.add(bucket, nowMs);
      this.failedLookups.add(bucket, nowMs);
    }
    this.networks.add(bucket, nowMs);
    this.credentials.add(id, nowMs);
    this.ceiling.add("*", nowMs);
    if (unvalidated) this.#inFlight.set(id, (this.#inFlight.get(id) ?? 0) + 1);
    return { id, bucket, lookup, unvalidated, atMs: nowMs };
  }

  /**
   * True when `admitCall` would refuse a call of `credential` from `bucket` now; counts
   * nothing. A request that is going to be refused reads nothing while it authenticates.
   */
  refusesNow(bucket: string, credential: string): boolean {
    try {
      this.#admissible(bucket, credentialId(credential), this.#deps.clock.nowMs());
      return false;
    } catch (e) {
      if (e instanceof BoardError && e.status === 429) return true;
      throw e;
    }
  }

  /**
   * The edge checks of one call (429 RATE_LIMITED when one is reached), counting nothing:
   * whether its credential was not validated lately, and whether it would need a lookup.
   */
  #admissible(bucket: string, id: string, nowMs: number) {
    this.#check(
      this.networks,
      bucket,
      LIMITS.networkCalls,
      nowMs,
      "Your network has made {n} authenticated calls in the last minute; slow down.",
    );
    this.#check(
      this.credentials,
      id,
      LIMITS.credentialCalls,
      nowMs,
      "This credential has made {n} calls in the last minute; slow down.",
    );
    const unvalidated = !this.validatedCredentials.seen(id, nowMs);
    const lookup = unvalidated && !this.#inFlight.has(id);
    this.#check(
      this.ceiling,
      "*",
      LIMITS.apiCeiling,
      nowMs,
      "The board is answering its ceiling of {n} authenticated calls a minute; retry shortly.",
    );
    if (lookup) {
      this.#check(
        this.failedLookups,
        bucket,
        LIMITS.networkFailedLookups,
        nowMs,
        "Your network has sent {n} unknown, revoked or rotated credentials in the last minute; check your key and retry later.",
      );
      this.#check(
        this.networkLookups,
        bucket,
        LIMITS.networkLookups,
        nowMs,
        "Your network has presented {n} credentials this board had not validated lately in the last minute; retry shortly.",
      );
      this.#check(
        this.lookups,
        "*",
        LIMITS.credentialLookups,
        nowMs,
        "The board is validating as many new credentials as it can this minute; retry shortly.",
      );
    }
    return { unvalidated, lookup };
  }

  /**
   * Settles an admitted call once its credential resolved (`ok`) or did not. A resolved
   * credential skips the lookup budget on its next calls for a minute or two.
   */
  settle(a: Admission, ok: boolean): void {
    if (a.unvalidated) {
      const n = this.#inFlight.get(a.id) ?? 0;
      if (n > 1) this.#inFlight.set(a.id, n - 1);
      else this.#inFlight.delete(a.id);
    }
    const nowMs = this.#deps.clock.nowMs();
    if (ok) {
      this.validatedCredentials.add(a.id, nowMs);
      if (a.lookup) this.failedLookups.take(a.bucket, a.atMs);
    } else if (a.lookup) this.lookups.take("*", a.atMs);
    else this.failedLookups.add(a.bucket, nowMs);
  }

  /**
   * Admits the further messages of a JSON-RPC batch (`extra` calls) of a call already
   * admitted, once its credential has resolved: all or none, counted in the same allowance
   * (`a.bucket`) and for the same credential, only when they all fit under the network,
   * credential and ceiling limits. When they do not, the call's own admission is taken back
   * too (a refused request counts nothing) and 429 RATE_LIMITED is thrown. They need no
   * lookup: the credential is known.
   */
  admitExtraCalls(a: Admission, extra: number): void {
    if (extra < 1) return;
    const nowMs = this.#deps.clock.nowMs();
    const counted = this.#admissionCounters(a);
    for (const [counter, key, spec] of counted) {
      const size = limitOf(this.#deps, spec);
      // The call itself is counted already: `extra` more fit under `size` exactly when one
      // more fits under `size - extra + 1`.
      const wait = size - extra < 0 ? WINDOW_MS : counter.wait(key, nowMs, size - extra + 1);
      if (wait > 0) {
        this.release(a);
        this.#refuse(
          spec,
          size,
          wait,
          `A batch of ${extra + 1} messages counts as ${
            extra + 1
          } calls; it does not fit under ${spec.name} (${size}).`,
        );
      }
    }
    for (const [counter, key] of counted) {
      for (let i = 0; i < extra; i++) counter.add(key, nowMs);
    }
  }

  /** Takes back the call counts of an admitted call that is refused after all. */
  release(a: Admission): void {
    for (const [counter, key] of this.#admissionCounters(a)) counter.take(key, a.atMs);
  }

  #admissionCounters(a: Admission): Array<[MinuteCounter, string, LimitSpec]> {
    return [
      [this.networks, a.bucket, LIMITS.networkCalls],
      [this.credentials, a.id, LIMITS.credentialCalls],
      [this.ceiling, "*", LIMITS.apiCeiling],
    ];
  }

  /** Admits one registration that passed input validation, or throws 429 RATE_LIMITED. */
  admitValidatedRegistration(): void {
    const nowMs = this.#deps.clock.nowMs();
    this.#check(
      this.registrations,
      "*",
      LIMITS.validatedRegistrations,
      nowMs,
      "The board is taking in as many registrations as it can this minute; retry shortly.",
    );
    this.registrations.add("*", nowMs);
  }
}

const limiters = new WeakMap<Deps, EdgeLimiter>();

/** The edge limiter of the instance that `deps` belongs to (one per Deps, made on first use). */
export function edgeLimiter(deps: Deps): EdgeLimiter {
  let l = limiters.get(deps);
  if (!l) limiters.set(deps, l = new EdgeLimiter(deps));
  return l;
}
