/** The one source of time for the whole service: Unix seconds. */
import { noteChangeAt } from "./read_scope.ts";

export interface Clock {
  /** Current time in whole Unix seconds. */
  now(): number;
  /** Current time in milliseconds (for sub-second limiter maths). */
  nowMs(): number;
  /** Moves the clock forward (tests; `POST /mod/clock` only when `BOARD_TEST_CLOCK=1`). */
  advance(seconds: number): void;
  /** Seconds `advance` has moved this clock in all. */
  shifted(): number;
}

/** The real wall clock, optionally shifted forward (the `/mod/clock` test hook). */
export class SystemClock implements Clock {
  #offsetMs = 0;
  now(): number {
    return Math.floor(this.nowMs() / 1000);
  }
  nowMs(): number {
    return Date.now() + this.#offsetMs;
  }
  /** Moves the clock forward; only reachable when `BOARD_TEST_CLOCK=1`. */
  advance(seconds: number): void {
    this.#offsetMs += seconds * 1000;
  }
  shifted(): number {
    return this.#offsetMs / 1000;
  }
}

/** A clock that only moves when told to: for tests of daily windows and expiries. */
export class ManualClock implements Clock {
  #ms: number;
  #shifted = 0;
  constructor(startSeconds = Date.UTC(2026, 0, 5, 12) / 1000) {
    this.#ms = startSeconds * 1000;
  }
  now(): number {
    return Math.floor(this.#ms / 1000);
  }
  nowMs(): number {
    return this.#ms;
  }
  advance(seconds: number): void {
    this.#ms += seconds * 1000;
    this.#shifted += seconds;
  }
  shifted(): number {
    return this.#shifted;
  }
  /** Sets the time (not counted as a shift). */
  set(seconds: number): void {
    this.#ms = seconds * 1000;
  }
}

/**
 * Moves `clock` forward until it has been shifted `shift` seconds in all; never back. One
 * synchronous step, so requests of one process catching up at once move it once.
 */
export function catchUp(clock: Clock, shift: number): void {
  const behind = shift - clock.shifted();
  if (behind > 0) clock.advance(behind);
}

/** The UTC day number (days since the epoch) of a Unix-seconds instant. */
export function utcDay(seconds: number): number {
  return Math.floor(seconds / 86400);
}

/** Unix seconds of the next UTC midnight after `seconds`. */
export function nextUtcMidnight(seconds: number): number {
  return (utcDay(seconds) + 1) * 86400;
}

/**
 * Whether the instant `now` has reached `at` (`now >= at`): how the rules compare a stored
 * time with the clock. While it has not, whatever is being computed may change at `at`, so
 * the comparison records that boundary for the read cache (domain/read_scope.ts): a cached
 * answer is served only until the clock reaches it. Outside a cached read it records nothing.
 */
export function reached(now: number, at: number): boolean {
  if (now >= at) return true;
  noteChangeAt(at);
  return false;
}

/**
 * The UTC day of `now`, for today's counts and allowances: what is computed with it
 * changes at the next UTC midnight, which is recorded like a boundary `reached` compares.
 */
export function today(now: number): number {
  noteChangeAt(nextUtcMidnight(now));
  return utcDay(now);
}
