/**
 * Bad input, in process: the generated corpus (tests/reliability/bad_input_corpus.ts) sent
 * to every route of the app. Never a 5xx; always the documented error object of the
 * route's family with the status its code maps to, and the right code where the layer
 * decides it; the server keeps answering; the data is unchanged (KV fingerprint).
 */
import assert from "node:assert/strict";
import { agentHeaders, idemKey, jsonInit, post, register, testBoard } from "../helpers.ts";
import { connect } from "../oauth_helpers.ts";
import {
  type Case,
  casesFor,
  type CorpusContext,
  profile,
  type RouteProfile,
} from "./bad_input_corpus.ts";
import {
  answer,
  assertErrorShape,
  isDeskPath,
  kvChanges,
  kvSnapshot,
  listRoutes,
} from "./harness.ts";

const MOD_KEY = "reliability-moderator-key-0123456789abcdef";

/** What happened to one case; throws when the answer is wrong. */
async function verdict(p: RouteProfile, c: Case, res: Response): Promise<string> {
  const a = await answer(res);
  const where = `${p.route.method} ${p.route.path} [${c.category}: ${c.label}] ${
    c.path.slice(0, 120)
  }`;
  assert.ok(a.status < 500, `5xx for ${where}: ${a.status} ${a.text.slice(0, 300)}`);
  // Human pages may read a malformed parameter leniently (a page for people, not an API).
  if (c.ignoredOk && a.status < 300 && p.family === "web") return "page tolerated it";
  if (c.ignoredOk && a.status < 300) {
    assert.equal(a.status, p.baseline?.status, `ignored parameter changed the answer: ${where}`);
    assert.equal(a.text, p.baseline?.text, `ignored parameter changed the answer: ${where}`);
    return "ignored";
  }
  if (c.readOk && a.status < 300) return "read of an unknown id";
  // The moderator desk's pages, asked without a desk session, send the browser to sign in.
  if (isDeskPath(p.route.path) && a.status === 303) {
    assert.match(a.headers.get("location") ?? "", /^\/mod\/desk\/sign-in/, where);
    return "desk sign-in";
  }
  // An articles page read with a trailing slash is sent to its own address, on the site.
  if (p.family === "web" && c.category === "path tricks" && c.label === "trailing slash") {
    if (a.status === 301) {
      const to = a.headers.get("location") ?? "";
      assert.equal(to, c.path.replace(/\/+(\?|$)/, "$1"), where);
      return "sent to its address";
    }
  }
  if (p.family === "mcp" && a.status === 202 && a.text === "") return "accepted as no-op";
  const consent = p.route.path === "/oauth/authorize" || p.route.path === "/authorize";
  if (consent && a.status === 303) {
    const loc = new URL(a.headers.get("location") ?? "http://x/");
    assert.ok(loc.searchParams.get("error") && !loc.searchParams.get("code"), where);
    return "error redirect";
  }
  const htmlOk = p.family === "web" || consent;
  const code = assertErrorShape(a, p.family, where, htmlOk);
  if (c.codes) assert.ok(c.codes.includes(code), `${where}: got ${code}, want ${c.codes}`);
  return `${a.status}`;
}

Deno.test("bad input: >= 1,000 malformed requests across every route never get a 5xx or change data", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, limitScale: 1000 }, {
    rulesPost: true,
  });
  const a = await register(board);
  const gone = await register(board);
  const rev = await board.request("/v1/me/revoke", {
    method: "POST",
    headers: agentHeaders(gone.key),
  });
  await rev.body?.cancel();
  const root = await post(board, a.key, { title: "corpus root", body: "corpus root" });
  const bRes = await board.request(
    "/b/posts",
    jsonInit("POST", { title: "b root", body: "b" }, undefined, { "idempotency-key": idemKey() }),
  );
  const bRoot = await bRes.json();
  const { tokens } = await connect(board, { mode: "link", api_key: a.key });
  const ctx: CorpusContext = {
    key: a.key,
    revokedKey: gone.key,
    modKey: MOD_KEY,
    accessToken: tokens.access_token,
    rootId: root.id,
    bRootId: bRoot.id,
    send: (path, init) => board.request(path, init),
  };

  const before = await kvSnapshot(board.kv);
  const routes = listRoutes(board.app);
  const totals = new Map<string, number>();
  const outcomes = new Map<string, number>();
  let sent = 0;
  for (const route of routes) {
    await t.step(`${route.method} ${route.path}`, async () => {
      const p = await profile(route, ctx);
      const cases = casesFor(p, ctx);
      assert.ok(cases.length > 0, "every route gets malformed requests");
      for (const c of cases) {
        const outcome = await verdict(p, c, await board.request(c.path, c.init));
        totals.set(c.category, (totals.get(c.category) ?? 0) + 1);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        sent++;
      }
      // Still answering after the batch.
      const health = await board.request("/v1/me", { headers: agentHeaders(a.key) });
      assert.equal(health.status, 200, "the server still answers");
      await health.body?.cancel();
    });
  }
  assert.ok(sent >= 1000, `corpus size ${sent}`);
  // Refused moderator actions are audited by design (docs/pins_rules_moderation.md): the only
  // writes allowed.
  const audit =
    /^(added|changed) \[("mod_audit"|"action_replays","moderator"|"counters","mod_audit")/;
  const changes = kvChanges(before, await kvSnapshot(board.kv)).filter((c) => !audit.test(c));
  assert.deepEqual(changes, [], `malformed requests changed data:\n${changes.join("\n")}`);
  const fmt = (m: Map<string, number>) => [...m].map(([k, v]) => `${k} ${v}`).join(", ");
  console.log(
    `bad-input corpus: ${sent} requests over ${routes.length} routes; by category: ${
      fmt(totals)
    }; outcomes: ${fmt(outcomes)}`,
  );
});
