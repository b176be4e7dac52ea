/**
 * The bad-input corpus: for every route of the app (enumerated, so later routes are
 * covered), malformed requests at every layer — headers and credentials, the
 * Idempotency-Key, Content-Type, the path, the query string and the body — each with the
 * error codes a correct board answers where the layer decides them. Routes are profiled
 * first (corpus_profile.ts); bodies come from corpus_bodies.ts.
 */
import { generateApiKey } from "../../domain/accounts/mod.ts";
import { type BodyDefect, genericBodyDefects, schemaBodyDefects } from "./corpus_bodies.ts";
import {
  ACTS_WITHOUT_BODY,
  baseHeaders,
  type Case,
  type CorpusContext,
  hasBodyMethod,
  idem,
  type RouteProfile,
} from "./corpus_profile.ts";
import { fillPath, hasParams, needsAgentKey, needsProtocol } from "./harness.ts";

export {
  ACTS_WITHOUT_BODY,
  type Case,
  type CorpusContext,
  profile,
  type RouteProfile,
} from "./corpus_profile.ts";

/** Header-, credential-, key- and content-type-level defects (board routes). */
function headerCases(p: RouteProfile, ctx: CorpusContext): Case[] {
  const out: Case[] = [];
  const r = p.route;
  const withBody = hasBodyMethod(r);
  const body = withBody ? JSON.stringify(p.valid ?? {}) : undefined;
  const q = p.query ? `?${p.query}` : "";
  const add = (
    category: string,
    label: string,
    edit: (h: Record<string, string>) => void,
    codes?: string[],
  ) => {
    const h = baseHeaders(p, withBody);
    edit(h);
    out.push({
      category,
      label,
      path: p.path + q,
      init: { method: r.method, headers: h, body },
      codes,
    });
  };
  const isMod = r.path.startsWith("/mod");
  if (needsProtocol(r) || isMod) {
    const JR = ["JSON_REQUIRED"];
    add("headers", "no Accept", (h) => delete h.accept, JR);
    add("headers", "Accept */*", (h) => (h.accept = "*/*"), JR);
    add("headers", "Accept application/xml", (h) => (h.accept = "application/xml"), JR);
    add("headers", "Accept application/jsonx", (h) => (h.accept = "application/jsonx"), JR);
    if (withBody) {
      add("content type", "text/plain", (h) => (h["content-type"] = "text/plain"), JR);
      add(
        "content type",
        "JSON, then HTML",
        (h) => (h["content-type"] = "application/json, text/html"),
        JR,
      );
      add(
        "content type",
        "form",
        (h) => (h["content-type"] = "application/x-www-form-urlencoded"),
        JR,
      );
      add(
        "content type",
        "multipart",
        (h) => (h["content-type"] = "multipart/form-data; boundary=x"),
        JR,
      );
      add(
        "content type",
        "application/jsonp",
        (h) => (h["content-type"] = "application/jsonp"),
        JR,
      );
    }
  }
  if (needsProtocol(r)) {
    const PR = ["PROTOCOL_REQUIRED"];
    add("headers", "no X-Agent-Protocol", (h) => delete h["x-agent-protocol"], PR);
    add("headers", "protocol board/2", (h) => (h["x-agent-protocol"] = "board/2"), PR);
    add("headers", "protocol given twice", (h) => (h["x-agent-protocol"] = "board/1, board/1"), PR);
    add("headers", "protocol Board/1", (h) => (h["x-agent-protocol"] = "Board/1"), PR);
    add("headers", "protocol with NBSP", (h) => (h["x-agent-protocol"] = "board/1\u00a0"), PR);
    add(
      "headers",
      "protocol header injection attempt",
      (h) => (h["x-agent-protocol"] = "board/1 X-Admin: 1"),
      PR,
    );
  }
  if (needsAgentKey(r) || isMod) {
    const U = ["UNAUTHORIZED"];
    const key = p.bearer ?? ctx.key;
    add("credentials", "no Authorization", (h) => delete h.authorization, U);
    add("credentials", "Bearer without a token", (h) => (h.authorization = "Bearer"), U);
    add("credentials", "Basic scheme", (h) => (h.authorization = "Basic dXNlcjpwYXNz"), U);
    add("credentials", "garbage token", (h) => (h.authorization = "Bearer garbage"), U);
    add(
      "credentials",
      "unknown key in the key format",
      (h) => (h.authorization = `Bearer ${generateApiKey(crypto.randomUUID())}`),
      U,
    );
    add("credentials", "token then junk", (h) => (h.authorization = `Bearer ${key} extra`), U);
    add(
      "credentials",
      "Latin-1 byte appended",
      (h) => (h.authorization = `Bearer ${key}\u00ff`),
      U,
    );
    add(
      "credentials",
      "5,000-character token",
      (h) => (h.authorization = `Bearer ${"k".repeat(5000)}`),
      U,
    );
    add(
      "credentials",
      "key in upper case",
      (h) => (h.authorization = `Bearer ${key.toUpperCase()}`),
      U,
    );
    add(
      "credentials",
      "key one character short",
      (h) => (h.authorization = `Bearer ${key.slice(0, -1)}`),
      U,
    );
    add(
      "credentials",
      "key given twice",
      (h) => (h.authorization = `Bearer ${key}, Bearer ${key}`),
      U,
    );
    if (isMod) {
      add("credentials", "an agent key on /mod", (h) => (h.authorization = `Bearer ${ctx.key}`), U);
    } else {
      add("credentials", "revoked key", (h) => (h.authorization = `Bearer ${ctx.revokedKey}`), U);
      // The moderator key is no credential outside /mod: the answer of any unknown token.
      add("credentials", "moderator key", (h) => (h.authorization = `Bearer ${ctx.modKey}`), U);
    }
  }
  if (p.usesIdem) {
    const I = ["INVALID_INPUT"];
    add("idempotency key", "missing", (h) => delete h["idempotency-key"], [
      "IDEMPOTENCY_KEY_REQUIRED",
    ]);
    add("idempotency key", "15 characters", (h) => (h["idempotency-key"] = "a".repeat(15)), I);
    add("idempotency key", "129 characters", (h) => (h["idempotency-key"] = "a".repeat(129)), I);
    add("idempotency key", "spaces", (h) => (h["idempotency-key"] = "has spaces in it ok ok"), I);
    add("idempotency key", "slashes", (h) => (h["idempotency-key"] = "abc/def/ghi/jkl/mno"), I);
    add("idempotency key", "Latin-1", (h) => (h["idempotency-key"] = "\u00ff".repeat(20)), I);
    add(
      "idempotency key",
      "given twice",
      (h) => (h["idempotency-key"] = `${idem()}, ${idem()}`),
      I,
    );
  }
  return out;
}

const PATH_VALUES: [string, string][] = [
  ["not a uuid", "not-a-uuid"],
  ["encoded space", "%20"],
  ["traversal", "..%2F..%2Fetc%2Fpasswd"],
  ["uuid with NUL", "00000000-0000-4000-8000-000000000000%00"],
  ["unknown uuid", "00000000-0000-4000-8000-000000000000"],
  ["uuid in upper case, unknown", "ABCDEF00-0000-4000-8000-000000000000"],
  ["invalid percent-encoding", "%ff%fe"],
  ["malformed percent", "%zz"],
  ["zero-width before a uuid", "%E2%80%8B00000000-0000-4000-8000-000000000000"],
  ["right-to-left mark after a uuid", "00000000-0000-4000-8000-000000000000%E2%80%8F"],
  ["3,000 characters", "x".repeat(3000)],
  ["negative number", "-1"],
  ["huge number", "1e309"],
  ["template left in", "%7Bid%7D"],
  ["backslash", "%5C..%5Cwindows"],
  ["encoded slash", "a%2Fb"],
];

/** Path tricks: bad parameters, and suffixes that must not reach another route. */
function pathCases(p: RouteProfile): Case[] {
  const r = p.route;
  const out: Case[] = [];
  const withBody = hasBodyMethod(r);
  const body = withBody ? JSON.stringify(p.valid ?? {}) : undefined;
  const q = p.query ? `?${p.query}` : "";
  // Outside "/mod/" (e.g. "//mod/...") the moderator key is an unknown token: 401. A trick
  // that lands on another known path with a method it does not serve is 405.
  const board = p.family !== "board"
    ? undefined
    : r.path.startsWith("/mod")
    ? ["INVALID_INPUT", "NOT_FOUND", "METHOD_NOT_ALLOWED", "UNAUTHORIZED"]
    : ["INVALID_INPUT", "NOT_FOUND", "METHOD_NOT_ALLOWED"];
  const add = (label: string, path: string) =>
    out.push({
      category: "path tricks",
      label,
      path,
      init: { method: r.method, headers: baseHeaders(p, withBody), body },
      codes: board,
      readOk: r.method === "GET" && label.includes("unknown"),
    });
  if (hasParams(r.path)) {
    for (const [label, v] of PATH_VALUES) add(label, fillPath(r.path, v) + q);
  }
  if (r.path !== "/") {
    add("trailing slash", `${p.path}/` + q);
    add("double slash", `/${p.path}` + q);
    add("encoded NUL segment", `${p.path}/%00` + q);
    add("unknown sub-path", `${p.path}/extra` + q);
  }
  return out;
}

const QUERY_DEFECTS: [string, string, "limit" | "cursor" | "any"][] = [
  ["limit=abc", "limit=abc", "limit"],
  ["limit=0", "limit=0", "limit"],
  ["limit one over the maximum", "limit=MAX+1", "limit"],
  ["limit=-1", "limit=-1", "limit"],
  ["limit=1.5", "limit=1.5", "limit"],
  ["limit=1e1", "limit=1e1", "limit"],
  ["limit empty", "limit=", "limit"],
  ["limit 23 digits", "limit=99999999999999999999999", "limit"],
  ["limit fullwidth digit", "limit=%EF%BC%95", "limit"],
  ["limit hex", "limit=0x1f", "limit"],
  ["limit with a space", "limit=%205", "limit"],
  ["limit NUL", "limit=5%00", "limit"],
  ["limit repeated", "limit=1&limit=2", "limit"],
  ["before=0", "before=0", "cursor"],
  ["before=-5", "before=-5", "cursor"],
  ["before=abc", "before=abc", "cursor"],
  ["before beyond 2^53", "before=9007199254740993", "cursor"],
  ["before repeated", "before=1&before=2", "cursor"],
  ["after=1.5", "after=1.5", "cursor"],
  ["before with after", "before=5&after=6", "cursor"],
  ["articles_limit=0", "articles_limit=0", "any"],
  ["articles_before with articles_after", "articles_before=1&articles_after=2", "any"],
  ["topic with capitals", "topic=Bad_Topic", "any"],
  ["topic of 41 characters", `topic=${"a".repeat(41)}`, "any"],
  ["topic with zero-width", "topic=general%E2%80%8B", "any"],
  ["q of 101 characters", `q=${"a".repeat(101)}`, "any"],
  ["q of 13 tokens", `q=${Array.from({ length: 13 }, (_, i) => `w${i}`).join("+")}`, "any"],
  ["q without a token", "q=!!!", "any"],
  ["q with a lone surrogate", "q=%ED%A0%80", "any"],
  ["board unknown", "board=bogus", "any"],
  ["post_id not a uuid", "post_id=nope", "any"],
  ["post_ids with junk", "post_ids=x,y", "any"],
  ["voters=maybe", "voters=maybe", "any"],
  ["malformed percent in a name", "%zz=1", "any"],
  ["parameter without a value", "limit", "limit"],
  ["array syntax", "limit[]=1", "any"],
  ["empty name", "=5", "any"],
  ["only separators", "&&&", "any"],
  ["RTL override", "topic=%E2%80%AEgeneral", "any"],
];

/** Query-string defects (GET routes). */
function queryCases(p: RouteProfile): Case[] {
  const out: Case[] = [];
  for (const [label, defect, kind] of QUERY_DEFECTS) {
    const paged = kind === "limit" ? p.paged : kind === "cursor" ? p.cursors : false;
    out.push({
      category: "query string",
      label,
      path: `${p.path}?${
        [p.query, defect.replace("MAX+1", String(p.maxLimit + 1))].filter(Boolean).join("&")
      }`,
      init: { headers: baseHeaders(p, false) },
      codes: paged
        ? (kind === "limit"
          ? ["INVALID_LIMIT", "INVALID_INPUT"]
          : ["INVALID_CURSOR", "INVALID_INPUT"])
        : undefined,
      ignoredOk: !paged,
    });
  }
  return out;
}

function bodyCase(p: RouteProfile, d: BodyDefect): Case {
  const headers = { ...baseHeaders(p, true), ...(d.headers ?? {}) };
  let codes = p.family === "board" && p.readsBody ? d.codes : undefined;
  // Article routes report schema failures with their own 400 code, listing every failure.
  if (codes?.includes("INVALID_INPUT") && p.route.path.includes("/articles")) {
    codes = [...codes, "ARTICLE_CHECKS_FAILED"];
  }
  const q = p.query ? `?${p.query}` : "";
  return {
    category: d.category,
    label: d.label,
    path: p.path + q,
    init: { method: p.route.method, headers, body: d.body },
    codes,
  };
}

/** Every malformed request for one route. */
export function casesFor(p: RouteProfile, ctx: CorpusContext): Case[] {
  const out: Case[] = [];
  const key = `${p.route.method} ${p.route.path}`;
  if (p.family === "board") out.push(...headerCases(p, ctx));
  out.push(...pathCases(p));
  if (p.route.method === "GET") out.push(...queryCases(p));
  if (hasBodyMethod(p.route) && !ACTS_WITHOUT_BODY.has(key)) {
    for (const d of genericBodyDefects(p.valid ?? {}, p.bodyLimit)) out.push(bodyCase(p, d));
    if (p.valid && p.family === "board") {
      for (const d of schemaBodyDefects(p.valid)) out.push(bodyCase(p, d));
    }
  }
  return out;
}
