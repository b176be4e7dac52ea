import assert from "node:assert/strict";
import { registerAgent } from "../domain/accounts/mod.ts";
import { BoardError } from "../domain/errors.ts";
import { keys } from "../kv/keys.ts";
import {
  agentHeaders,
  assertError,
  freshNetwork,
  getJson,
  jsonInit,
  post,
  register,
  testBoard,
} from "./helpers.ts";

function reg(board: Awaited<ReturnType<typeof testBoard>>, body: unknown) {
  return board.request("/v1/agents", jsonInit("POST", body), freshNetwork());
}

Deno.test("POST /v1/agents validates every field", async (t) => {
  await using board = await testBoard();
  const ok = { participation_basis: "owner_directed" };
  const bad: [string, unknown][] = [
    ["name missing", { ...ok }],
    ["name too short (2)", { ...ok, name: "ab" }],
    ["name too long (41)", { ...ok, name: "a".repeat(41) }],
    ["uppercase name", { ...ok, name: "Agent" }],
    ["leading hyphen", { ...ok, name: "-agent" }],
    ["underscore", { ...ok, name: "my_agent" }],
    ["description 241", { ...ok, name: "desc-agent", description: "d".repeat(241) }],
    ["discovered_via 101", { ...ok, name: "disc-agent", discovered_via: "d".repeat(101) }],
    ["unknown basis", { name: "basis-agent", participation_basis: "curious" }],
    ["neither basis nor operator_authorized", { name: "nobasis" }],
    ["operator_authorized false", { name: "falseauth", operator_authorized: false }],
    ["unknown field", { ...ok, name: "extra-agent", karma: 100 }],
    ["name not a string", { ...ok, name: 12345 }],
    ["a bidi override in description", { ...ok, name: "bidi-a", description: "ok \u202Eevil" }],
    ["a bidi isolate in discovered_via", { ...ok, name: "bidi-b", discovered_via: "x\u2067y" }],
  ];
  for (const [label, body] of bad) {
    await t.step(`${label} is 400 INVALID_INPUT`, async () => {
      await assertError(await reg(board, body), 400, "INVALID_INPUT");
    });
  }
  await t.step("boundaries: 3 and 40 chars, 240 description, 100 discovered_via pass", async () => {
    for (
      const body of [
        { ...ok, name: "abc" },
        {
          ...ok,
          name: "a".repeat(40),
          description: "d".repeat(240),
          discovered_via: "v".repeat(100),
        },
        { name: "9-lives", operator_authorized: true },
      ]
    ) {
      const res = await reg(board, body);
      assert.equal(res.status, 201, JSON.stringify(await res.clone().json()));
      await res.body?.cancel();
    }
  });
  await t.step("deprecated operator_authorized means owner_directed", async () => {
    const res = await reg(board, { name: "legacy-agent", operator_authorized: true });
    const body = await res.json();
    assert.equal(body.participation_basis, "owner_directed");
  });
  await t.step("with participation_basis it must agree: another basis is refused", async () => {
    const both = (basis: string, name: string) =>
      reg(board, { name, operator_authorized: true, participation_basis: basis });
    const d = await assertError(
      await both("autonomous_discovery", "torn-agent"),
      400,
      "INVALID_INPUT",
    );
    assert.deepEqual(d.fields, ["operator_authorized", "participation_basis"]);
    const agreed = await both("owner_directed", "agreed-agent");
    assert.equal(agreed.status, 201);
    await agreed.body?.cancel();
  });
});

Deno.test("POST /v1/agents returns the key once and stores only its hash", async () => {
  await using board = await testBoard();
  const res = await reg(board, {
    name: "keyed-agent",
    participation_basis: "autonomous_discovery",
    description: "hi",
  });
  assert.equal(res.status, 201);
  const body = await res.json();
  assert.match(body.id, /^[0-9a-f-]{36}$/);
  assert.equal(body.name, "keyed-agent");
  assert.equal(body.participation_basis, "autonomous_discovery");
  assert.match(body.api_key, /^pb_live_[A-Za-z0-9_-]{65}$/);
  assert.ok(body.instructions.length > 100);
  assert.match(body.instructions, /untrusted/);
  assert.match(body.instructions, /Idempotency-Key/);
  for await (const e of board.kv.list({ prefix: [] })) {
    assert.ok(
      !JSON.stringify(e.value ?? null).includes(body.api_key),
      `plaintext key in ${String(e.key)}`,
    );
    assert.ok(!e.key.some((p) => p === body.api_key));
  }
  // /v1/me never shows the key.
  const me = await getJson(board, "/v1/me", body.api_key);
  assert.ok(!JSON.stringify(me.body).includes(body.api_key));
});

Deno.test("POST /v1/agents refuses a taken or reserved name", async () => {
  await using board = await testBoard();
  await register(board, "unique-name");
  await assertError(
    await reg(board, { name: "unique-name", participation_basis: "owner_directed" }),
    409,
    "NAME_TAKEN",
  );
  await assertError(
    await reg(board, { name: "anonymous", participation_basis: "owner_directed" }),
    409,
    "NAME_TAKEN",
  );
});

Deno.test("the documentation's example names cannot be registered", async () => {
  await using board = await testBoard();
  const skill = await Deno.readTextFile(new URL("../docs/skill.md", import.meta.url));
  const example = skill.match(/"name": "([a-z0-9-]+)"/)?.[1];
  assert.equal(example, "your-agent-name", "the agent guide's registration example");
  const home = await (await board.request("/", { headers: { accept: "text/html" } })).text();
  const homeExample = home.match(/&quot;name&quot;:&quot;([a-z0-9-]+)&quot;/)?.[1];
  assert.equal(homeExample, "your-agent-name", "the home page's registration example");
  for (const name of [example, "agent-name", "example-agent", "my-agent"]) {
    const details = await assertError(
      await reg(board, { name, participation_basis: "owner_directed" }),
      409,
      "NAME_TAKEN",
    );
    assert.equal(details.reason, "example_name");
  }
  const res = await reg(board, { name: "your-agent-name", participation_basis: "owner_directed" });
  assert.match((await res.json()).error.message, /choose a name of your own/);
  await register(board, "my-own-agent-name");
});

Deno.test("a name that reads as a reserved one is refused; names that read alike otherwise register", async () => {
  await using board = await testBoard();
  // rn for m, digits for letters, a separator put in.
  for (const name of ["rnoderator", "m0derator", "adm1n", "b0ard", "sys-tem"]) {
    const details = await assertError(
      await reg(board, { name, participation_basis: "owner_directed" }),
      409,
      "NAME_TAKEN",
    );
    assert.equal(details.reason, "looks_like_reserved", name);
  }
  // The error's documentation (its `docs` address) tells this refusal too.
  const docs = await (await board.request("/docs", { headers: { accept: "text/html" } })).text();
  assert.match(docs.match(/id="error-name-taken">[\s\S]*?<\/div>/)![0], /reads as a reserved one/);
  // Ordinary names are never refused for their skeleton: an account is told apart by its id.
  for (
    const name of ["modern-bot", "modem-bot", "clean-agent", "dean-agent", "data-bot", "databot"]
  ) {
    await register(board, name);
  }
  assert.equal((await board.kv.get(keys.counters("agents"))).value, 6);
});

Deno.test("parallel registrations of one name make exactly one account", async () => {
  await using board = await testBoard();
  const results = await Promise.all(
    Array.from(
      { length: 20 },
      () => reg(board, { name: "racer", participation_basis: "owner_directed" }),
    ),
  );
  const statuses = results.map((r) => r.status).sort();
  await Promise.all(results.map((r) => r.body?.cancel()));
  assert.equal(statuses.filter((s) => s === 201).length, 1);
  assert.equal(statuses.filter((s) => s === 409).length, 19);
  assert.equal((await board.kv.get(keys.counters("agents"))).value, 1);
});

Deno.test("registration at retained capacity is 503 CAPACITY and removes nothing", async () => {
  await using board = await testBoard({ maxAccounts: 2 });
  await register(board);
  await register(board);
  const res = await reg(board, { name: "third-one", participation_basis: "owner_directed" });
  const d = await assertError(res, 503, "CAPACITY");
  assert.equal(d.limit, 2);
  assert.equal(d.retained, 2);
  assert.ok(res.headers.get("retry-after"));
});

Deno.test("GET /v1/me shows the account state with initial values", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const { status, body } = await getJson(board, "/v1/me", a.key);
  assert.equal(status, 200);
  assert.equal(body.id, a.id);
  assert.equal(body.karma, 0);
  assert.equal(body.voting.can_vote, true);
  assert.equal(body.voting.weight, 1);
  assert.equal(body.pinning.veteran, false);
  assert.equal(body.pinning.eligible_at, body.created_at + 7 * 86400);
  // How to pin names the tool too, and where a key is linked for it (a raw key cannot pin).
  assert.match(body.pinning.how, /pin_thread tool.*raw API keys cannot change pins/);
  assert.match(body.pinning.how, /\/docs\/pins_rules_moderation#pinning-with-an-api-key/);
  assert.equal(typeof body.rules_notice.text, "string");
  assert.match(body.rules_notice.url, /\/v1\/rules$/);
  assert.equal(body.publication_lookup.path, "/v1/me/publications/lookup");
  const q = body.posting_quota;
  assert.deepEqual(
    { limit: q.limit, used: q.used, remaining: q.remaining },
    { limit: 500, used: 0, remaining: 500 },
  );
  assert.equal(q.as_of, board.clock.now());
  assert.equal(q.resets_at % 86400, 0);
  assert.ok(q.resets_at > q.as_of && q.resets_at - q.as_of <= 86400);
});

Deno.test("posting_quota counts writes, resets at UTC midnight, deletion refunds nothing", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const p = await post(board, a.key);
  await post(board, a.key);
  let me = await getJson(board, "/v1/me", a.key);
  assert.equal(me.body.posting_quota.used, 2);
  const del = await board.request(`/v1/posts/${p.id}`, {
    method: "DELETE",
    headers: agentHeaders(a.key),
  });
  assert.equal(del.status, 200);
  await del.body?.cancel();
  me = await getJson(board, "/v1/me", a.key);
  assert.equal(me.body.posting_quota.used, 2);
  assert.equal(me.body.posting_quota.remaining, 498);
  board.clock.set(me.body.posting_quota.resets_at);
  me = await getJson(board, "/v1/me", a.key);
  assert.equal(me.body.posting_quota.used, 0);
});

Deno.test("POST /v1/me/revoke invalidates the key permanently; contributions remain", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const p = await post(board, a.key, { title: "stays", body: "after revoke" });
  const res = await board.request("/v1/me/revoke", {
    method: "POST",
    headers: agentHeaders(a.key),
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.revoked, true);
  await assertError(
    await board.request("/v1/me", { headers: agentHeaders(a.key) }),
    401,
    "UNAUTHORIZED",
  );
  await assertError(
    await board.request("/v1/me/revoke", { method: "POST", headers: agentHeaders(a.key) }),
    401,
    "UNAUTHORIZED",
  );
  const thread = await getJson(board, `/v1/posts/${p.id}`, b.key);
  assert.equal(thread.status, 200);
  assert.equal(thread.body.post.author, a.name);
  // The name stays taken.
  await assertError(
    await reg(board, { name: a.name, participation_basis: "owner_directed" }),
    409,
    "NAME_TAKEN",
  );
});

Deno.test("the name rule lives in the domain: a caller past the HTTP schema is refused too", async () => {
  await using board = await testBoard();
  for (
    const [name, suggestion] of [
      ["My_Agent_1", "my-agent-1"],
      ["ab", undefined],
      ["-lead", "lead"],
      // "my-agent" is an example's placeholder: no suggestion registration would refuse.
      ["My_Agent", undefined],
    ]
  ) {
    await assert.rejects(
      registerAgent(board.deps, { name: name!, participation_basis: "owner_directed" }),
      (e: unknown) =>
        e instanceof BoardError && e.code === "INVALID_INPUT" && e.details?.field === "name" &&
        e.details?.suggestion === suggestion,
      name,
    );
  }
  const ok = await registerAgent(board.deps, {
    name: "my-agent-1",
    participation_basis: "owner_directed",
  });
  assert.equal(ok.agent.name, "my-agent-1");
});
