/** Service configuration, read once from the environment by main.ts (README "Configuration"). */
import { boardSecretProblem } from "../domain/accounts/mod.ts";
import { moderatorKeyProblem } from "../domain/moderation/mod.ts";

import type { Config } from "../domain/deps.ts";

export type { Config };

function num(v: string | undefined, fallback: number, name: string): number {
  if (v === undefined || v === "") return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
}

/** Builds the configuration from environment variables; `dev` selects dev defaults. */
export function loadConfig(env: Record<string, string | undefined>, dev = false): Config {
  const port = num(env.PORT, 8000, "PORT");
  const production = env.BOARD_ENV === "production";
  const config: Config = {
    port,
    hostname: env.HOSTNAME || (dev ? "127.0.0.1" : "0.0.0.0"),
    kvPath: env.BOARD_KV === undefined
      ? (env.DENO_DEPLOYMENT_ID ? undefined : "./data/board.kv")
      : env.BOARD_KV || undefined,
    baseUrl: (env.BOARD_BASE_URL || `http://localhost:${port}`).replace(/\/+$/, ""),
    moderatorKey: env.BOARD_MODERATOR_KEY || undefined,
    secret: env.BOARD_SECRET || undefined,
    trustProxy: env.BOARD_TRUST_PROXY === "1",
    testClock: env.BOARD_TEST_CLOCK === "1",
    articlesGraceDays: num(env.BOARD_ARTICLES_GRACE_DAYS, 14, "BOARD_ARTICLES_GRACE_DAYS"),
    limitScale: num(env.BOARD_LIMIT_SCALE, 1, "BOARD_LIMIT_SCALE"),
    maxAccounts: num(env.BOARD_MAX_ACCOUNTS, 5000, "BOARD_MAX_ACCOUNTS"),
    maxPosts: num(env.BOARD_MAX_POSTS, 25000, "BOARD_MAX_POSTS"),
    searchBatch: num(env.BOARD_SEARCH_BATCH, 512, "BOARD_SEARCH_BATCH"),
    backgroundSealing: true,
    backgroundPurges: true,
    telemetry: /^(true|1)$/i.test(env.OTEL_DENO ?? "") || !!env.DENO_DEPLOYMENT_ID,
    production,
  };
  return checked(config);
}

/** Refuses values no process may run with (thrown as an Error with a clear message). */
function checked(config: Config): Config {
  if (!Number.isInteger(config.searchBatch) || config.searchBatch < 1) {
    throw new Error("BOARD_SEARCH_BATCH must be a whole number of at least 1");
  }
  if (config.production && !config.secret) {
    throw new Error("BOARD_SECRET is required when BOARD_ENV=production");
  }
  const problem = boardSecretProblem(config.secret) ?? moderatorKeyProblem(config.moderatorKey);
  if (problem) throw new Error(problem);
  return config;
}

/**
 * The configuration of the serving process (main.ts). Outside development (`--dev`, as
 * `deno task dev` runs it) BOARD_SECRET is required: without it the sealing secret would
 * have to be kept in KV, beside what it seals.
 */
export function serviceConfig(env: Record<string, string | undefined>, dev: boolean): Config {
  const config = loadConfig(env, dev);
  if (!dev && !config.secret) {
    throw new Error(
      "BOARD_SECRET is not set. It is the key material that seals linked credentials; set it " +
        "to a long random value kept outside the KV store (for example the output of " +
        "`openssl rand -base64 32`) and keep it stable. Only `deno task dev` runs without it.",
    );
  }
  return config;
}

/** A configuration for tests: in-memory defaults, overridable. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return checked({
    ...loadConfig({ BOARD_KV: ":memory:", BOARD_BASE_URL: "http://board.test" }),
    secret: "test-secret-test-secret-test-secret",
    // Small sealed batches, so that searches in tests cross sealed blocks and the tail.
    searchBatch: 8,
    backgroundSealing: false,
    backgroundPurges: false,
    ...overrides,
  });
}
