/**
 * What one unit of work (a request) costs in KV calls: how many calls it made, how many
 * sequential round trips they took, and how many commits conflicted or had to be retried.
 * On Deno Deploy every call crosses the network, so the round trips are the latency a
 * request pays for KV (docs/architecture.md, "Round trips").
 *
 * A call issued while another of the same unit is still in flight joins that round trip;
 * a call issued when none is in flight starts the next one. A `list` counts as one call,
 * made when its first page is read.
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
  /** Attempts run again after a conflict or a busy store (kv/tx.ts). */
  retries = 0;
  #inFlight = 0;

  /** Records a call issued now; returns the function that records its end. */
  begin(): () => void {
    this.calls++;
    if (this.#inFlight++ === 0) this.roundTrips++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#inFlight--;
    };
  }
}

let source: () => KvMeter | undefined = () => undefined;

/** Names the meter that KV calls made from now on report to (undefined: none). */
export function setMeterSource(fn: () => KvMeter | undefined): void {
  source = fn;
}

/** The meter of the work running now, if any. */
export function currentMeter(): KvMeter | undefined {
  return source();
}

/** Runs one KV call, reporting it to the current meter. */
export function metered<T>(call: () => Promise<T>): Promise<T> {
  const meter = source();
  if (!meter) return call();
  const end = meter.begin();
  return call().finally(end);
}

/** A list iterator whose first page read is reported to the current meter. */
export function meteredList<T>(it: Deno.KvListIterator<T>): Deno.KvListIterator<T> {
  let first = true;
  const next = it.next.bind(it);
  it.next = () => {
    if (!first) return next();
    first = false;
    return metered(next);
  };
  return it;
}
