/**
 * What a request costs, in production traces (docs/deploy.md, "Traces"). With
 * `OTEL_DENO=true` Deno makes a span for every request it serves and exports it over OTLP;
 * this middleware names that span after the operation (`POST castVote`, `GET homePage`; the
 * matched route pattern where no operation matched) and records what the request cost in KV
 * as attributes:
 *
 * - `board.operation`: the registry's operation id, or the matched route pattern;
 * - `board.kv.round_trips`: sequential KV round trips (kv/meter.ts);
 * - `board.kv.calls`: KV calls in all;
 * - `board.kv.conflicts`, `board.kv.retries`: refused commits and re-run attempts.
 *
 * Nothing it records comes from the URL as sent (the operation, or the route pattern), so a
 * credential an agent puts in the URL gets no further copy here. Deno's own `url.*` attributes,
 * set before the board runs, do record it, and cannot be replaced (a second value is added
 * beside the first): docs/deploy.md, "Credentials in URLs", redacts them in the collector.
 *
 * Without telemetry nothing is installed and nothing is metered.
 */
import { type Span, trace } from "@opentelemetry/api";
import type { MiddlewareHandler } from "hono";
import { KvMeter, setMeterSource } from "../kv/meter.ts";
import type { AppEnv } from "./env.ts";

const meters = new WeakMap<Span, KvMeter>();

/** The meter of the request whose span is active (KV calls made in its context report there). */
function activeMeter(): KvMeter | undefined {
  const span = trace.getActiveSpan();
  return span && meters.get(span);
}

/** The request-telemetry middleware: install first, so that it sees every KV call. */
export function requestTelemetry(): MiddlewareHandler<AppEnv> {
  setMeterSource(activeMeter);
  return async (c, next) => {
    const span = trace.getActiveSpan();
    if (!span) return await next();
    const meter = new KvMeter();
    meters.set(span, meter);
    try {
      await next();
    } finally {
      const operation = c.get("operation") ?? c.req.matchedRoutes.at(-1)?.path ?? "unmatched";
      span.updateName(`${c.req.method} ${operation}`);
      span.setAttributes({
        "board.operation": operation,
        "board.kv.calls": meter.calls,
        "board.kv.round_trips": meter.roundTrips,
        "board.kv.conflicts": meter.conflicts,
        "board.kv.retries": meter.retries,
      });
    }
  };
}
