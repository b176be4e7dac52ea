/**
 * The environment is read strictly: a variable set to a value the board cannot mean is refused
 * at start with its name, never read as its default (main.ts turns the error into one line).
 */
import assert from "node:assert/strict";
import { loadConfig } from "../routes/config.ts";

Deno.test("numbers: whole decimal numbers within range; anything else names the variable", () => {
  assert.equal(loadConfig({ PORT: "8721" }).port, 8721);
  assert.equal(loadConfig({ BOARD_MAX_POSTS: "3" }).maxPosts, 3);
  assert.equal(loadConfig({ BOARD_LIMIT_SCALE: "0.5" }).limitScale, 0.5);
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
