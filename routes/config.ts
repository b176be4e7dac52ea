/** Service configuration, read once from the environment by main.ts (README "Configuration"). */
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
    production,
  };
  if (production && !config.secret) {
    throw new Error("BOARD_SECRET is required when BOARD_ENV=production");
  }
  return config;
}

/** A configuration for tests: in-memory defaults, overridable. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ BOARD_KV: ":memory:", BOARD_BASE_URL: "http://board.test" }),
    secret: "test-secret-test-secret-test-secret",
    ...overrides,
  };
}
