/**
 * Unknown query parameters are refused on the agent routes (`/v1`, `/b`, `/api`, `/votes`,
 * `/pins`, `/mod`): a guessed name (`since`, `cursor`, `offset`) would otherwise be ignored
 * and return the newest page on every poll. The allowed names are the operation's declared
 * parameters, so the check, the routes and `/openapi.json` cannot disagree.
 */
import type { Context } from "hono";
import type { z } from "zod";
import { BoardError } from "../domain/errors.ts";
import { cursorGuessHint } from "../domain/paging.ts";
import { takeCodeUnits } from "../domain/text.ts";
import { zodIssues } from "./schemas.ts";
import { credentialInUrl, credentialInUrlAdvice } from "./credential_in_url.ts";
import type { Operation } from "./api/operation.ts";

/** Path prefixes whose operations refuse undeclared query parameters. */
const STRICT_PREFIXES = ["/v1/", "/b/", "/api/", "/votes", "/pins", "/mod/"];

/** The query parameter names `op` declares (its query input, then its other parameters). */
export function allowedQueryParams(op: Operation): string[] {
  const all = [...(op.query?.params ?? []), ...(op.params ?? [])];
  return [...new Set(all.filter((p) => p.in === "query").map((p) => p.name))];
}

/** True when `op` refuses query parameters it does not declare. */
export function refusesUnknownQuery(op: Operation): boolean {
  return !op.htmlErrors && STRICT_PREFIXES.some((p) => op.path.startsWith(p));
}

/**
 * 400 INVALID_INPUT naming the first query parameter `op` does not take, with
 * `details.parameter` and `details.allowed`. Names its query reader reads only to refuse
 * with a message of its own (`topic` on `/b`) pass through to it.
 */
export function refuseUnknownQuery(op: Operation, c: Context): void {
  const names = queryNames(c.req.url);
  const allowed = allowedQueryParams(op);
  const passed = new Set([...allowed, ...(op.query?.refused ?? [])]);
  const unknown = names.find((k) => !passed.has(k));
  if (unknown === undefined) return;
  const route = `${op.method.toUpperCase()} ${op.path}`;
  const takes = allowed.length ? `takes ${allowed.join(", ")}` : "takes no query parameters";
  let hint = allowed.includes("after") ? cursorGuessHint(unknown) : "";
  if (hint === "" && /^idempotency[-_]?key$/i.test(unknown)) {
    hint = ' An idempotency key goes in the "Idempotency-Key" header, never in the URL.';
  }
  const exposed = credentialInUrl(c.get("deps").config, c.req.url);
  if (exposed !== null) hint += credentialInUrlAdvice(exposed);
  throw new BoardError(
    "INVALID_INPUT",
    `Unknown parameter "${takeCodeUnits(unknown, 60)}"; ${route} ${takes}.${hint}`,
    { parameter: takeCodeUnits(unknown, 60), allowed },
  );
}

/**
 * The names of a URL's query parameters, decoded, in order: a parameter with an empty name
 * (`?=5`) is one too, named "", where an empty pair (`?a=1&`) is none. 400 INVALID_INPUT
 * names the first parameter whose name or value is not percent-encoded UTF-8 (`%FF`,
 * `%C0%80`, a lone `%`): read leniently it would become other text than was meant (a search
 * for the letters "FF").
 */
function queryNames(url: string): string[] {
  const search = url.indexOf("?") < 0 ? "" : url.slice(url.indexOf("?") + 1).split("#")[0];
  const names: string[] = [];
  for (const pair of search.split("&")) {
    if (pair === "") continue;
    const at = pair.indexOf("=");
    const [name, value] = at < 0 ? [pair, ""] : [pair.slice(0, at), pair.slice(at + 1)];
    const decoded = decodedQueryPart(name);
    if (decoded !== null && decodedQueryPart(value) !== null) {
      names.push(decoded);
      continue;
    }
    const parameter = takeCodeUnits(decoded ?? name, 60);
    throw new BoardError(
      "INVALID_INPUT",
      `Parameter "${parameter}" is not valid percent-encoded UTF-8; encode the text as UTF-8, then percent-encode it (for example with encodeURIComponent).`,
      { parameter },
    );
  }
  return names;
}

/** A query string's name or value decoded (`+` is a space), or null when it is malformed. */
function decodedQueryPart(raw: string): string | null {
  try {
    return decodeURIComponent(raw.replaceAll("+", " "));
  } catch {
    return null;
  }
}

/**
 * Parses one query parameter with a zod schema, or 400 INVALID_INPUT naming the parameter
 * (`details.parameter`, `details.issues`).
 */
export function parseQueryParam<S extends z.ZodType>(
  name: string,
  schema: S,
  raw: unknown,
): z.infer<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  // The parsed value beside the error: an entry of a list that was sent is never "missing".
  const issues = zodIssues(result.error, raw).map((i) => ({ ...i, field: name }));
  throw new BoardError(
    "INVALID_INPUT",
    `Parameter "${name}" is invalid: ${issues[0].message}.`,
    { parameter: name, issues },
  );
}
