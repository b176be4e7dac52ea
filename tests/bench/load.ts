/**
 * The load client of `deno task bench`: sends a fixed number of requests over loopback with
 * a fixed number in flight, and times each from send to the last byte of its answer. Every
 * request can carry its own credential, network (`X-Forwarded-For`, the server trusting its
 * proxy) and Idempotency-Key, so that real limits apply to the run as to real agents.
 * Bodies are asked for uncompressed unless a request says otherwise.
 */

export interface LoadRequest {
  path: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requests: number;
  /** Answers with a status of 400 or more, and failed connections. */
  errors: number;
  /** The status codes seen, with how many of each. */
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  mean: number;
  /** From the first send to the last answer. */
  seconds: number;
  rps: number;
  /** Every request's time, ms, in the order answered. */
  times: number[];
}

/** Headers every agent request carries. */
export const AGENT_HEADERS = { accept: "application/json", "x-agent-protocol": "board/1" };

let networks = 0;

/** A network no earlier request of this process used (for `X-Forwarded-For`). */
export function freshNetwork(): string {
  const n = ++networks;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Sends the requests `next` hands out (until it hands out null) with `concurrency` in
 * flight at a time, and times each.
 */
async function timed(
  base: string,
  concurrency: number,
  next: () => LoadRequest | null,
): Promise<LoadResult> {
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  const worker = async () => {
    for (let r = next(); r; r = next()) {
      const t0 = performance.now();
      let status = "failed";
      try {
        const res = await fetch(base + r.path, {
          method: r.method ?? "GET",
          headers: { "accept-encoding": "identity", ...r.headers },
          body: r.body,
        });
        await res.arrayBuffer();
        status = String(res.status);
        if (res.status >= 400) errors++;
      } catch {
        errors++;
      }
      times.push(performance.now() - t0);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return summarise(times, errors, statuses, (performance.now() - started) / 1000);
}

function summarise(
  times: number[],
  errors: number,
  statuses: Record<string, number>,
  seconds: number,
): LoadResult {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    requests: times.length,
    errors,
    statuses,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: times.reduce((a, b) => a + b, 0) / Math.max(1, times.length),
    seconds,
    rps: times.length / seconds,
    times,
  };
}

/** Several runs as one: their requests, answers and time added up. */
export function combine(results: LoadResult[]): LoadResult {
  const statuses: Record<string, number> = {};
  for (const r of results) {
    for (const [s, n] of Object.entries(r.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
  }
  return summarise(
    results.flatMap((r) => r.times),
    results.reduce((n, r) => n + r.errors, 0),
    statuses,
    results.reduce((n, r) => n + r.seconds, 0),
  );
}

/** Sends `count` requests made by `make(i)` (made before the first is sent). */
export function drive(
  base: string,
  count: number,
  concurrency: number,
  make: (i: number) => LoadRequest,
): Promise<LoadResult> {
  const requests = Array.from({ length: count }, (_, i) => make(i));
  let i = 0;
  return timed(base, Math.min(concurrency, count), () => i < count ? requests[i++] : null);
}

/** Sends the requests `make(i)` makes until `seconds` have passed or it makes null. */
export function driveFor(
  base: string,
  seconds: number,
  concurrency: number,
  make: (i: number) => LoadRequest | null,
): Promise<LoadResult> {
  const deadline = performance.now() + seconds * 1000;
  let i = 0;
  return timed(base, concurrency, () => performance.now() < deadline ? make(i++) : null);
}
