/**
 * The environment is read strictly: a variable set to a value the board cannot mean is refused
 * at start with its name, never read as its default (main.ts turns the error into one line).
 */
import assert from "node:assert/strict";
import { loadConfig, startupSummary, unknownVariables } from "../routes/config.ts";

/** Every BOARD_* variable routes/config.ts reads, from its source (a new one is then known). */
const CONFIG_VARIABLES = [
  ...new Set(
    Deno.readTextFileSync(new URL("../routes/config.ts", import.meta.url))
      .match(/env(?:\.|\[")BOARD_[A-Z_]+|"BOARD_[A-Z_]+"[,)]/g)!
      .map((m) => m.match(/BOARD_[A-Z_]+/)![0]),
  ),
];

Deno.test("numbers: whole decimal numbers within range; anything else names the variable", () => {
  assert.equal(loadConfig({ PORT: "8721" }).port, 8721);
  assert.equal(loadConfig({ BOARD_MAX_POSTS: "3" }).maxPosts, 3);
  assert.equal(loadConfig({ BOARD_LIMIT_SCALE: "0.5" }).limitScale, 0.5);
  assert.equal(loadConfig({ BOARD_SEARCH_BATCH: "8192" }).searchBatch, 8192);
  for (
    const [name, value] of [
      ["PORT", "99999"],
      ["PORT", "8721.5"],
      ["PORT", "0x2227"],
      ["PORT", "1e3"],
      ["PORT", "-1"],
      ["BOARD_MAX_POSTS", "2.5"],
      ["BOARD_MAX_POSTS", "0"],
      ["BOARD_MAX_ACCOUNTS", "abc"],
      ["BOARD_SEARCH_BATCH", "0"],
      ["BOARD_SEARCH_BATCH", "8193"],
      ["BOARD_ARTICLES_GRACE_DAYS", "1.5"],
      ["BOARD_LIMIT_SCALE", "0"],
      ["BOARD_LIMIT_SCALE", "Infinity"],
    ]
  ) {
    assert.throws(() => loadConfig({ [name]: value }), new RegExp(`^Error: ${name} must be`));
  }
});

Deno.test("switches: 1/true/yes/on and 0/false/no/off; another value is refused, not read as off", () => {
  for (const on of ["1", "true", "TRUE", "yes", "on"]) {
    const c = loadConfig({ BOARD_TRUST_PROXY: on, BOARD_TEST_CLOCK: on });
    assert.deepEqual([c.trustProxy, c.testClock], [true, true], on);
  }
  for (const off of ["0", "false", "no", "off", ""]) {
    assert.equal(loadConfig({ BOARD_TRUST_PROXY: off }).trustProxy, false, off);
  }
  assert.equal(loadConfig({}).trustProxy, false);
  assert.throws(() => loadConfig({ BOARD_TRUST_PROXY: "maybe" }), /BOARD_TRUST_PROXY must be 1/);
  assert.throws(() => loadConfig({ BOARD_TEST_CLOCK: "2" }), /BOARD_TEST_CLOCK must be 1/);
});

Deno.test("BOARD_ENV is production or development", () => {
  assert.equal(loadConfig({ BOARD_ENV: "development" }).production, false);
  assert.equal(loadConfig({}).production, false);
  assert.throws(() => loadConfig({ BOARD_ENV: "prod" }), /BOARD_ENV must be "production"/);
});

Deno.test("BOARD_BASE_URL: an absolute http(s) URL, trailing slashes dropped", () => {
  assert.equal(
    loadConfig({ BOARD_BASE_URL: "https://board.example/" }).baseUrl,
    "https://board.example",
  );
  assert.equal(
    loadConfig({ BOARD_BASE_URL: "http://10.0.0.5:8000" }).baseUrl,
    "http://10.0.0.5:8000",
  );
  assert.equal(loadConfig({ PORT: "8123" }).baseUrl, "http://localhost:8123");
  for (
    const bad of [
      "board.example",
      "ftp://board.example",
      "https://board.example/?x=1",
      "https://board.example/#top",
      "https://user:pw@board.example",
      "https://",
    ]
  ) {
    assert.throws(() => loadConfig({ BOARD_BASE_URL: bad }), /BOARD_BASE_URL must be/, bad);
  }
});

Deno.test("the listen address is BOARD_HOSTNAME; the HOSTNAME containers set is not read", () => {
  assert.equal(loadConfig({ BOARD_HOSTNAME: "10.1.2.3" }).hostname, "10.1.2.3");
  assert.equal(loadConfig({ HOSTNAME: "container-1f2e" }).hostname, "0.0.0.0");
  assert.equal(loadConfig({ HOSTNAME: "container-1f2e" }, true).hostname, "127.0.0.1");
});

Deno.test("secrets: no spaces at the ends, enough distinct characters; the moderator key printable ASCII and not the secret", () => {
  const good = "secret-review-0123456789abcdef-0123";
  const key = "modkey-review-0123456789abcdef-0123";
  assert.equal(loadConfig({ BOARD_SECRET: good, BOARD_MODERATOR_KEY: key }).moderatorKey, key);
  for (
    const [name, value, why] of [
      ["BOARD_SECRET", " ".repeat(32), /distinct characters|starts or ends/],
      ["BOARD_SECRET", "a".repeat(40), /fewer than 5 distinct characters/],
      ["BOARD_SECRET", `${good} `, /starts or ends with a space/],
      ["BOARD_MODERATOR_KEY", `${key} `, /starts or ends with a space/],
      ["BOARD_MODERATOR_KEY", `${key}\n`, /starts or ends with a space or line break/],
      ["BOARD_MODERATOR_KEY", `${key}é`, /printable ASCII/],
      ["BOARD_MODERATOR_KEY", "modkey review 0123456789abcdef 0123", /printable ASCII/],
      ["BOARD_MODERATOR_KEY", "b".repeat(32), /fewer than 5 distinct characters/],
    ] as const
  ) {
    assert.throws(() => loadConfig({ [name]: value }), why, JSON.stringify(value));
  }
  assert.throws(
    () => loadConfig({ BOARD_SECRET: good, BOARD_MODERATOR_KEY: good }),
    /BOARD_MODERATOR_KEY is the same value as BOARD_SECRET/,
  );
});

Deno.test("PORT=0 needs BOARD_BASE_URL: the system's port is not one the board's URLs can name", () => {
  assert.throws(() => loadConfig({ PORT: "0" }), /PORT=0 .* set BOARD_BASE_URL/);
  assert.equal(
    loadConfig({ PORT: "0", BOARD_BASE_URL: "https://board.example" }).baseUrl,
    "https://board.example",
  );
});

Deno.test("a BOARD_* variable the board does not read is warned about, with the name it may mean", () => {
  assert.deepEqual(
    unknownVariables({
      BOARD_MODERATOR_KY: "x",
      BOARD_TRUST_PROXI: "1",
      BOARD_SECRET: "y",
      BOARD_COLOUR: "blue",
      BOARD_limit_scale: "2",
      PATH: "/bin",
    }),
    [
      "BOARD_COLOUR is set, but the board reads no such variable.",
      "BOARD_MODERATOR_KY is set, but the board reads no such variable; did you mean BOARD_MODERATOR_KEY?",
      "BOARD_TRUST_PROXI is set, but the board reads no such variable; did you mean BOARD_TRUST_PROXY?",
      "BOARD_limit_scale is set, but the board reads no such variable; did you mean BOARD_LIMIT_SCALE?",
    ],
  );
  // Every variable the configuration reads is known.
  assert.deepEqual(unknownVariables(Object.fromEntries(CONFIG_VARIABLES.map((n) => [n, "1"]))), []);
});

Deno.test("the start-up summary says whether moderation and proxy trust are on", () => {
  const off = startupSummary(loadConfig({}));
  assert.match(off, /Moderation: off \(BOARD_MODERATOR_KEY is unset\)/);
  assert.match(off, /connection's address \(BOARD_TRUST_PROXY is off\)/);
  const on = startupSummary(
    loadConfig({
      BOARD_MODERATOR_KEY: "modkey-review-0123456789abcdef-0123",
      BOARD_TRUST_PROXY: "1",
    }),
  );
  assert.match(on, /Moderation: on/);
  assert.match(on, /X-Forwarded-For's last hop \(BOARD_TRUST_PROXY=1\)/);
  assert.doesNotMatch(on, /new: created/);
  assert.match(
    startupSummary(loadConfig({}), true),
    /Store: \.\/data\/board\.kv \(new: created by this start\)\./,
  );
  // An empty BOARD_KV: the platform's store on Deploy, a file in Deno's cache elsewhere.
  const empty = loadConfig({ BOARD_KV: "" });
  assert.match(startupSummary(empty, false, true), /Store: the platform's KV\./);
  assert.match(startupSummary(empty, false, false), /Deno's cache folder \(DENO_DIR\)/);
});
