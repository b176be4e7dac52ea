/**
 * Rate limits: the table of sizes, exact KV limiters, and the in-memory edge limiter. The entry
 * module of this area: routes/, mcp/, oauth/ and cli/ import the area only here.
 */
// ---- exports
export { edgeLimiter, MinuteCounter } from "./edge.ts";
export { limitOf, wholeSeconds, WINDOW_EXPIRE_MS, windowAdmit } from "./rates.ts";
export type { LimitSpec } from "./rates.ts";
