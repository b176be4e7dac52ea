/**
 * The tidy-up jobs that span areas (sweeps.ts, run by the cron and at start-up), and the
 * service's health for an operator's probe (health.ts). It sits at
 * the top of the domain: it finishes work of accounts, articles, writes, moderation, pins and
 * search, and nothing in the domain imports it. The entry module of this area.
 */
// ---- exports
export { health, HEALTH_READ_MS } from "./health.ts";
export { runSweeps } from "./sweeps.ts";
