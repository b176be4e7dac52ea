/**
 * Rate limits: the table of sizes, exact KV limiters, and the in-memory edge limiter. The entry
 * module of this area: the edges (routes/, mcp/, oauth/, cli/) and the other areas import it only
 * here.
 */
// ---- exports
export { edgeLimiter, MinuteCounter } from "./edge.ts";
export {
  admitToWindow,
  applyNetworkWrite,
  bucketAdmit,
  CAPACITY_SLOTS_PER_SECOND,
  chargeDailyAllowance,
  chargeNetworkWrite,
  checkDailyAllowance,
  dailyLimits,
  DAY_COUNTER_MS,
  limitExceeded,
  limitOf,
  LIMITS,
  limitScale,
  limitSpec,
  networkRecordOf,
  networkWriteKey,
  wholeSeconds,
  WINDOW_EXPIRE_MS,
  windowAdmit,
  windowRefund,
} from "./rates.ts";
export type { LimitSpec } from "./rates.ts";
export type { Admission } from "./edge.ts";
