/** Cursor paging over sequence-keyed KV listings, exactly as the spec's Common rules. */
import type { Typed, ValueOf } from "../kv/key_values.ts";
import { listTyped, type TypedListSelector } from "../kv/read_many.ts";
import { BoardError } from "./errors.ts";
import { takeCodeUnits } from "./text.ts";

export interface PageParams {
  limit: number;
  before?: number;
  after?: number;
}

export interface Page<T> {
  items: T[];
  next_before: number | null;
  next_after: number | null;
  newest_cursor: number | null;
}

export const PAGE_LIMIT = { min: 1, max: 30, default: 10 } as const;

/** Names people guess for a polling cursor: the refusal of such a name says what to use. */
const CURSOR_GUESSES = new Set(["since", "cursor", "offset", "page", "from", "since_id", "start"]);

/**
 * What the refusal of an unknown parameter or argument `name` adds, where the list it was
 * sent to pages with `after`: `name` guessed for a polling cursor (`since`, `cursor`,
 * `offset`, …) is told to send `after` instead; any other name gets "".
 */
export function cursorGuessHint(name: string): string {
  return CURSOR_GUESSES.has(name.toLowerCase())
    ? ' To read what is newer than a checkpoint, send "after" with the last "newest_cursor".'
    : "";
}

/**
 * 400 INVALID_CURSOR for an `after` beyond `newest`, the newest position of the sequence it
 * pages (`stream` names it: "the newest message of this board"): no answer of that sequence
 * gave it (its head only grows, and is read after any answer the caller saw), so it is a
 * cursor of another feed, board or stream, or of a store since replaced, and polling it would
 * stay empty for good. `details` adds to `{parameter, newest_seq}`.
 */
export function refuseAfterBeyond(
  after: number | undefined,
  newest: number,
  parameter: string,
  stream: string,
  details: Record<string, unknown> = {},
): void {
  if (after === undefined || after <= newest) return;
  throw new BoardError(
    "INVALID_CURSOR",
    `Parameter "${parameter}" (${after}) is beyond ${stream} (${newest}): it is not a cursor of it. Read without "${parameter}" and save the newest_cursor it answers.`,
    { parameter, ...details, newest_seq: newest },
  );
}

/**
 * `listed` showing `items` (newest first) instead of what it listed, some of which are left
 * out (hidden, or removed meanwhile). `newest_cursor` is the newest item shown, null when none
 * is (the spec's "highest sequence returned": a client keeps its checkpoint then); the paging
 * cursors stay the listing's, so following `next_after` or `next_before` goes on past what was
 * left out.
 */
export function pageShowing<U extends { seq: number }>(listed: Page<unknown>, items: U[]): Page<U> {
  return { ...listed, items, newest_cursor: items.length ? items[0].seq : null };
}

/** A query parameter as given: absent, once, or (ambiguous, refused) several times. */
type QueryValue = string | string[] | undefined | null;

/** The one value of a parameter, undefined when absent; `repeated` answers a repeated one. */
function once(raw: QueryValue, repeated: (times: number) => BoardError): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) return raw;
  if (raw.length > 1) throw repeated(raw.length);
  return raw[0];
}

/** The largest cursor (a seq): the largest integer JSON numbers carry exactly everywhere. */
const MAX_CURSOR = Number.MAX_SAFE_INTEGER;

/**
 * How page values are spelled: query text (`abc`, quoted when a message shows it) or, for a
 * tool's arguments, the argument's JSON text (`"abc"`, `[3]`, `12`: shown as it is).
 */
type Spelling = "query" | "json";

function intParam(
  name: string,
  value: QueryValue,
  min: number,
  spelling: Spelling,
  direction: "before" | "after",
): number | undefined {
  const raw = once(
    value,
    (times) =>
      new BoardError(
        "INVALID_CURSOR",
        `Parameter "${name}" was given ${times} times; give it once.`,
        { parameter: name, min },
      ),
  );
  if (raw === undefined) return undefined;
  const n = integerSpelled(raw);
  if (!(n >= min && n <= MAX_CURSOR)) {
    // A long value is cut; a JSON string cut keeps its closing quote.
    const quoted = spelling === "json" && raw.startsWith('"') ? '"' : "";
    const shown = raw.length > 40 ? `${takeCodeUnits(raw, 40)}…${quoted}` : raw;
    const got = spelling === "json" ? shown : `"${shown}"`;
    // `after=0`, an empty or null variable: no cursor yet, which is sent as no parameter. An
    // `after` goes on from the first read's newest_cursor, a `before` from its next_before.
    const none = /^(0*|null|none|nil|undefined|nan)$/i.test(raw.trim());
    const hint = direction === "after"
      ? ` With no checkpoint yet, leave "${name}" out: the first read answers the newest_cursor to go on from.`
      : ` With no cursor yet, leave "${name}" out: the first read is the newest page, and its next_before goes on to older ones.`;
    throw new BoardError(
      "INVALID_CURSOR",
      `Parameter "${name}" must be an integer from ${min} to ${MAX_CURSOR} (got ${got}).${
        none ? hint : ""
      }`,
      { parameter: name, min, max: MAX_CURSOR, received: shown },
    );
  }
  return n;
}

/**
 * The integer a query value spells: digits, or a decimal or exponent spelling of an exact
 * integer ("1.073741838e+09", "14.0": how a JSON decoder that makes every number a float, as
 * Go's `map[string]any` does, prints a cursor; its "+" unencoded arrives as a space); NaN
 * otherwise.
 */
function integerSpelled(raw: string): number {
  if (/^\d{1,16}$/.test(raw)) return Number(raw);
  // An exponent's "+" sent unencoded reads as a space in a query string ("e 09").
  if (!/^\d{1,17}(\.\d{0,17})?(e[+ ]?\d{1,2})?$/i.test(raw)) return NaN;
  const n = Number(raw.replace(" ", "+"));
  return Number.isSafeInteger(n) ? n : NaN;
}

/**
 * Parses `limit`, `before`, `after` from query values (or, `spelling` "json", a tool
 * argument's JSON text); throws INVALID_LIMIT / INVALID_CURSOR, also for a parameter given more
 * than once.
 */
export function parsePageParams(
  q: { limit?: QueryValue; before?: QueryValue; after?: QueryValue },
  bounds: { min: number; max: number; default: number } = PAGE_LIMIT,
  names = { limit: "limit", before: "before", after: "after" },
  spelling: Spelling = "query",
): PageParams {
  const invalidLimit = (message: string) =>
    new BoardError("INVALID_LIMIT", message, {
      parameter: names.limit,
      min: bounds.min,
      max: bounds.max,
      default: bounds.default,
    });
  let limit = bounds.default;
  const rawLimit = once(
    q.limit,
    (times) => invalidLimit(`Parameter "${names.limit}" was given ${times} times; give it once.`),
  );
  if (rawLimit !== undefined) {
    if (
      !/^\d{1,6}$/.test(rawLimit) || Number(rawLimit) < bounds.min ||
      Number(rawLimit) > bounds.max
    ) {
      throw invalidLimit(
        `Parameter "${names.limit}" must be an integer from ${bounds.min} to ${bounds.max}.`,
      );
    }
    limit = Number(rawLimit);
  }
  const before = intParam(names.before, q.before, 1, spelling, "before");
  const after = intParam(names.after, q.after, 1, spelling, "after");
  if (before !== undefined && after !== undefined) {
    throw new BoardError(
      "INVALID_CURSOR",
      `Parameters "${names.before}" and "${names.after}" cannot be combined.`,
      { parameters: [names.before, names.after] },
    );
  }
  return { limit, before, after };
}

/**
 * Lists one page of a seq-keyed prefix (the last key part is the seq).
 * Default/`before`: newest first, `next_before`. `after`: the nearest newer page,
 * shown newest first, `next_after` while more newer items exist. A caller that leaves some
 * of them out shows the rest with `pageShowing`.
 */
export async function listPage<P extends Deno.KvKey & Typed<{ seq: number }>>(
  kv: Deno.Kv,
  prefix: P,
  params: PageParams,
): Promise<Page<ValueOf<P>>> {
  const page = await listEntryPage(kv, prefix, params);
  return { ...page, items: page.items.map((e) => e.value) };
}

/** The seqs (last key parts) of one page of a seq-keyed prefix, paged as `listPage`. */
export async function listSeqPage(
  kv: Deno.Kv,
  prefix: Deno.KvKey,
  params: PageParams,
): Promise<Page<number>> {
  const page = await listEntryPage(kv, prefix, params);
  return { ...page, items: page.items.map(seqOf) };
}

/** One page of a seq-keyed prefix as `listSeqPage`, each seq with its entry's value. */
export async function listSeqValuePage<P extends Deno.KvKey>(
  kv: Deno.Kv,
  prefix: P,
  params: PageParams,
): Promise<Page<{ seq: number; value: ValueOf<P> }>> {
  const page = await listEntryPage(kv, prefix, params);
  return { ...page, items: page.items.map((e) => ({ seq: seqOf(e), value: e.value })) };
}

function seqOf(e: Deno.KvEntry<unknown>): number {
  return e.key[e.key.length - 1] as number;
}

async function listEntryPage<P extends Deno.KvKey>(
  kv: Deno.Kv,
  prefix: P,
  params: PageParams,
): Promise<Page<Deno.KvEntry<ValueOf<P>>>> {
  const { limit, before, after } = params;
  const raw: Deno.KvEntry<ValueOf<P>>[] = [];
  if (after !== undefined) {
    const iter = listTyped(kv, { prefix, start: [...prefix, after + 1] }, { limit: limit + 1 });
    for await (const e of iter) raw.push(e);
    const more = raw.length > limit;
    const page = raw.slice(0, limit);
    const highest = page.length ? seqOf(page[page.length - 1]) : null;
    return {
      items: page.reverse(),
      next_before: null,
      next_after: more ? highest : null,
      newest_cursor: highest,
    };
  }
  const selector: TypedListSelector<P> = before !== undefined
    ? { prefix, end: [...prefix, before] }
    : { prefix };
  for await (const e of listTyped(kv, selector, { reverse: true, limit: limit + 1 })) raw.push(e);
  const more = raw.length > limit;
  const page = raw.slice(0, limit);
  return {
    items: page,
    next_before: more && page.length ? seqOf(page[page.length - 1]) : null,
    next_after: null,
    newest_cursor: page.length ? seqOf(page[0]) : null,
  };
}
