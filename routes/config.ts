/** Service configuration, read once from the environment by main.ts (README "Configuration"). */
import { boardSecretProblem } from "../domain/accounts/mod.ts";
import { moderatorKeyProblem, moderatorKeySecretProblem } from "../domain/moderation/mod.ts";
import { MAX_SEARCH_BATCH } from "../domain/search/mod.ts";

import type { Config } from "../domain/deps.ts";

export type { Config };

type Env = Record<string, string | undefined>;

/**
 * A whole number in decimal digits between `min` and `max` (`fallback` when unset or empty);
 * anything else (`2.5`, `0x2227`, `1e3`, out of range) is refused with the variable's name.
 */
function wholeVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const v = env[name];
  if (v === undefined || v === "") return fallback;
  const n = /^\d{1,15}$/.test(v) ? Number(v) : NaN;
  if (!(n >= min && n <= max)) {
    throw new Error(`${name} must be a whole number from ${min} to ${max}; it is "${v}".`);
  }
  return n;
}

/** A decimal number above zero (`fallback` when unset or empty), such as `2.5`. */
function positiveVar(env: Env, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === "") return fallback;
  const n = /^\d{1,15}(\.\d{1,15})?$/.test(v) ? Number(v) : NaN;
  if (!(n > 0)) {
    throw new Error(`${name} must be a number above 0, such as 2 or 0.5; it is "${v}".`);
  }
  return n;
}

/**
 * A switch: `1` (or `true`, `yes`, `on`) turns it on, `0` (or `false`, `no`, `off`) or unset
 * leaves it off; any other value is refused rather than read as off.
 */
function switchVar(env: Env, name: string): boolean {
  const v = (env[name] ?? "").trim().toLowerCase();
  if (v === "" || v === "0" || v === "false" || v === "no" || v === "off") return false;
  if (v === "1" || v === "true" || v === "yes" || v === "on") return true;
  throw new Error(`${name} must be 1 (on) or 0 (off); it is "${env[name]}".`);
}

/** `BOARD_ENV`: `production` or `development` (the default). */
function productionVar(env: Env): boolean {
  const v = env.BOARD_ENV ?? "";
  if (v === "production") return true;
  if (v === "" || v === "development") return false;
  throw new Error(`BOARD_ENV must be "production" or "development"; it is "${v}".`);
}

/**
 * `BOARD_BASE_URL`: an absolute `http:` or `https:` URL with a host and no query, fragment or
 * user name, its trailing slashes dropped. Refused at start, since OAuth's issuer and token
 * audience, every `url` field and `/openapi.json` are built from it.
 */
function baseUrlVar(env: Env, port: number): string {
  const v = env.BOARD_BASE_URL || `http://localhost:${port}`;
  const u = URL.parse(v);
  if (
    !u || (u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname || u.search ||
    u.hash || u.username || u.password || /[?#]/.test(v)
  ) {
    throw new Error(
      `BOARD_BASE_URL must be the board's public URL, such as https://board.example (http or https, no query or fragment); it is "${v}".`,
    );
  }
  return v.replace(/\/+$/, "");
}

/** Builds the configuration from environment variables; `dev` selects dev defaults. */
export function loadConfig(env: Env, dev = false): Config {
  const port = wholeVar(env, "PORT", 8000, 0, 65535);
  if (port === 0 && !env.BOARD_BASE_URL) {
    throw new Error(
      "PORT=0 lets the system pick a port, which the board's URLs cannot name: set BOARD_BASE_URL too, or a fixed PORT.",
    );
  }
  const production = productionVar(env);
  const config: Config = {
    port,
    hostname: env.BOARD_HOSTNAME || (dev ? "127.0.0.1" : "0.0.0.0"),
    kvPath: env.BOARD_KV === undefined
      ? (env.DENO_DEPLOYMENT_ID ? undefined : "./data/board.kv")
      : env.BOARD_KV || undefined,
    baseUrl: baseUrlVar(env, port),
    moderatorKey: env.BOARD_MODERATOR_KEY || undefined,
    secret: env.BOARD_SECRET || undefined,
    trustProxy: switchVar(env, "BOARD_TRUST_PROXY"),
    testClock: switchVar(env, "BOARD_TEST_CLOCK"),
    articlesGraceDays: wholeVar(env, "BOARD_ARTICLES_GRACE_DAYS", 14, 0, 3650),
    limitScale: positiveVar(env, "BOARD_LIMIT_SCALE", 1),
    maxAccounts: wholeVar(env, "BOARD_MAX_ACCOUNTS", 5000, 1, 1e9),
    maxPosts: wholeVar(env, "BOARD_MAX_POSTS", 25000, 1, 1e9),
    searchBatch: wholeVar(env, "BOARD_SEARCH_BATCH", 512, 1, MAX_SEARCH_BATCH),
    backgroundSealing: true,
    backgroundPurges: true,
    telemetry: /^(true|1)$/i.test(env.OTEL_DENO ?? "") || !!env.DENO_DEPLOYMENT_ID,
    production,
  };
  return checked(config);
}

/** Refuses values no process may run with (thrown as an Error with a clear message). */
function checked(config: Config): Config {
  if (config.production && !config.secret) {
    throw new Error("BOARD_SECRET is required when BOARD_ENV=production");
  }
  const problem = boardSecretProblem(config.secret) ??
    moderatorKeyProblem(config.moderatorKey) ??
    moderatorKeySecretProblem(config.moderatorKey, config.secret);
  if (problem) throw new Error(problem);
  return config;
}

/** Every BOARD_* variable the service reads (README "Configuration"). */
const BOARD_VARIABLES = [
  "BOARD_ARTICLES_GRACE_DAYS",
  "BOARD_BASE_URL",
  "BOARD_ENV",
  "BOARD_HOSTNAME",
  "BOARD_KV",
  "BOARD_LIMIT_SCALE",
  "BOARD_MAX_ACCOUNTS",
  "BOARD_MAX_POSTS",
  "BOARD_MODERATOR_KEY",
  "BOARD_SEARCH_BATCH",
  "BOARD_SECRET",
  "BOARD_TEST_CLOCK",
  "BOARD_TRUST_PROXY",
];

/**
 * BOARD_* variables the tests, the benchmarks and the example clients read (the service does
 * not; a server they start inherits them): not warned about.
 */
const OTHER_TOOLS_VARIABLES = [
  "BOARD_API_KEY",
  "BOARD_KV_BUDGETS_PRINT",
  "BOARD_KV_TRACE",
  "BOARD_NODE_CACHE",
  "BOARD_REQUIRE_BROWSER",
  "BOARD_REQUIRE_GO",
  "BOARD_STRESS",
  "BOARD_TEST_KV_URL",
  "BOARD_URL",
];

/** Edits (insertions, deletions, substitutions) between two names. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}

/**
 * A warning for each BOARD_* variable set in `env` that the service does not read: a misspelt
 * name would otherwise leave its setting at the default without a word (moderation off, the
 * proxy's address taken for every client). Names the closest variable it may have meant.
 */
export function unknownVariables(env: Env): string[] {
  return Object.keys(env)
    .filter((name) =>
      name.startsWith("BOARD_") && !BOARD_VARIABLES.includes(name) &&
      !OTHER_TOOLS_VARIABLES.includes(name)
    )
    .sort()
    .map((name) => {
      const near = BOARD_VARIABLES
        .map((known) => ({ known, d: distance(name.toUpperCase(), known) }))
        .sort((a, b) => a.d - b.d)[0];
      return `${name} is set, but the board reads no such variable` +
        (near.d <= 3 ? `; did you mean ${near.known}?` : ".");
    });
}

/**
 * What the operator should know the service runs with, said once at start. `newStore`: the
 * store file did not exist before this start (a misspelt path makes a new, empty board).
 * `onDeploy`: on Deno Deploy, where the platform's store is the board's; elsewhere an empty
 * `BOARD_KV` opens Deno's default store for the program, a file in Deno's cache folder.
 */
export function startupSummary(
  config: Config,
  newStore = false,
  onDeploy = !!Deno.env.get("DENO_DEPLOYMENT_ID"),
): string {
  const moderation = config.moderatorKey
    ? "on (BOARD_MODERATOR_KEY)"
    : "off (BOARD_MODERATOR_KEY is unset)";
  const networks = config.trustProxy
    ? "from X-Forwarded-For's last hop (BOARD_TRUST_PROXY=1)"
    : "the connection's address (BOARD_TRUST_PROXY is off)";
  const platform = onDeploy
    ? "the platform's KV"
    : "Deno's default store for this program (BOARD_KV is empty), a file in Deno's cache folder (DENO_DIR) that clearing the cache deletes: set BOARD_KV to a path to keep the board elsewhere";
  return `Moderation: ${moderation}. Client networks: ${networks}. Store: ${
    config.kvPath ?? platform
  }${newStore ? " (new: created by this start)" : ""}.`;
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
