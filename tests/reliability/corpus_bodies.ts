/**
 * Malformed request bodies for the bad-input corpus: broken JSON, bytes that are not
 * UTF-8, JSON that is not an object, deep nesting, sizes over the limits (declared,
 * undeclared and lied about), and — from a valid body of the route when one is known —
 * wrong types, missing and extra fields, out-of-range numbers and Unicode edges.
 */

/** One body defect: what it is, the bytes, extra headers, and the codes a board route answers. */
export interface BodyDefect {
  category: string;
  label: string;
  body: BodyInit;
  headers?: Record<string, string>;
  /** Board error codes a JSON-reading route must answer (undefined: any documented error). */
  codes?: string[];
  /** Only meaningful with the route's valid body (schema-level defects). */
  schema?: boolean;
}

const enc = new TextEncoder();
/** The board's whole-request limit (spec Errors 4); routes with their own limit pass theirs. */
export const REQUEST_LIMIT = 16384;

/** Fields whose values are free text (a zero-width or right-to-left mark there is legitimate). */
const FREE_TEXT = new Set([
  "title",
  "body",
  "text",
  "description",
  "discovered_via",
  "client_name",
  "reason",
]);

/** Optional fields: leaving one out is valid, so no "missing field" case is made for it. */
const OPTIONAL = new Set(["description", "discovered_via", "topic", "reply_to_id"]);

const INVALID_JSON_TEXTS: [string, string][] = [
  ["empty", ""],
  ["whitespace only", "   \n\t "],
  ["lone brace", "{"],
  ["unterminated string", '{"title": "abc'],
  ["single quotes", "{'title': 'x'}"],
  ["trailing comma", '{"title": "x",}'],
  ["missing colon", '{"title" "x"}'],
  ["two objects", "{}{}"],
  ["object then garbage", '{"title":"x"} trailing'],
  ["leading zero", '{"value": 01}'],
  ["NaN literal", '{"value": NaN}'],
  ["Infinity literal", '{"value": Infinity}'],
  ["hex number", '{"value": 0x10}'],
  ["comment", '{"title": "x" /* c */}'],
  ["unquoted key", "{title: 1}"],
  ["bad escape", '{"title": "\\x41"}'],
  ["short unicode escape", '{"title": "\\u12"}'],
  ["raw control character", '{"title": "a\u0001b"}'],
  ["NUL before the object", "\u0000{}"],
  ["nul literal", "nul"],
  ["tru literal", "tru"],
  ["closing brace only", "}"],
  ["unbalanced array", "[1,2"],
  ["form encoding", "title=x&body=y"],
  ["XML", "<post><title>x</title></post>"],
];

const NON_UTF8: [string, number[]][] = [
  ["0xFF 0xFE", [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]],
  ["overlong slash", [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]],
  ["lone continuation byte", [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x80, 0x22, 0x7d]],
  ["UTF-8 encoded surrogate", [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]],
  ["truncated 3-byte sequence", [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d]],
  ["Latin-1 e-acute", [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x63, 0x61, 0x66, 0xe9, 0x22, 0x7d]],
  ["code point over U+10FFFF", [
    0x7b,
    0x22,
    0x61,
    0x22,
    0x3a,
    0x22,
    0xf4,
    0x90,
    0x80,
    0x80,
    0x22,
    0x7d,
  ]],
  ["UTF-16 with BOM", [0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]],
];

const NON_OBJECTS = [
  "null",
  "true",
  "false",
  "0",
  "-1",
  "1e999",
  '"a string"',
  "[]",
  "[{}]",
  "[1,2]",
];

function stream(total: number, chunk = 4096): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= total) return c.close();
      const n = Math.min(chunk, total - sent);
      c.enqueue(new Uint8Array(n).fill(0x20));
      sent += n;
    },
  });
}

/** Route-independent defects (JSON syntax, encoding, shape, nesting, size). */
export function genericBodyDefects(
  valid: Record<string, unknown>,
  limit = REQUEST_LIMIT,
): BodyDefect[] {
  const out: BodyDefect[] = [];
  const J = ["INVALID_JSON"];
  for (const [label, text] of INVALID_JSON_TEXTS) {
    out.push({ category: "invalid JSON", label, body: text, codes: J });
  }
  const validText = JSON.stringify(valid);
  for (const cut of [1, Math.floor(validText.length / 2), validText.length - 1]) {
    if (cut > 0 && cut < validText.length) {
      out.push({
        category: "truncated JSON",
        label: `first ${cut} of ${validText.length} bytes`,
        body: validText.slice(0, cut),
        codes: J,
      });
    }
  }
  for (const [label, bytes] of NON_UTF8) {
    out.push({ category: "non-UTF-8", label, body: new Uint8Array(bytes), codes: J });
  }
  for (const text of [...NON_OBJECTS, `[${validText}]`]) {
    out.push({ category: "not an object", label: text.slice(0, 40), body: text, codes: J });
  }
  out.push({
    category: "deep nesting",
    label: "8,000 nested arrays",
    body: "[".repeat(8000) + "]".repeat(8000),
    codes: J,
  });
  out.push({
    category: "deep nesting",
    label: "2,500 nested objects",
    body: '{"a":'.repeat(2500) + "1" + "}".repeat(2500),
    codes: ["INVALID_INPUT"],
    schema: true,
  });
  const T = ["PAYLOAD_TOO_LARGE"];
  const big = JSON.stringify({ ...valid, padding: "x".repeat(limit) });
  out.push({ category: "oversized", label: "over the limit, JSON", body: big, codes: T });
  out.push({
    category: "oversized",
    label: "the limit plus one byte",
    body: " ".repeat(limit + 1 - validText.length) + validText,
    codes: T,
  });
  out.push({
    category: "oversized",
    label: "streamed past the limit, no length",
    body: stream(limit + 4000),
    codes: T,
  });
  out.push({
    category: "oversized",
    label: "lying Content-Length 5 for a body over the limit",
    body: big,
    headers: { "content-length": "5" },
    codes: T,
  });
  out.push({
    category: "oversized",
    label: "lying Content-Length over the limit for a small body",
    body: validText,
    headers: { "content-length": String(limit + 1) },
    codes: T,
  });
  out.push({
    category: "oversized",
    label: "Content-Length beyond 2^64",
    body: validText,
    headers: { "content-length": "99999999999999999999999" },
    codes: T,
  });
  for (const cl of ["abc", "-1", "1e3", "12 34", "+5", "0x10"]) {
    out.push({
      category: "bad Content-Length",
      label: JSON.stringify(cl),
      body: "{",
      headers: { "content-length": cl },
      codes: ["INVALID_INPUT"],
    });
  }
  return out;
}

function wrongValues(v: unknown): unknown[] {
  if (typeof v === "string") return [null, 0, 1.5, true, [], {}, [v], { v }];
  if (typeof v === "number") return [String(v), null, true, [], {}, [v]];
  if (typeof v === "boolean") return [String(v), 1, 0, null, [], {}];
  if (Array.isArray(v)) return [null, "x", 1, {}, [[]]];
  return [null, "x", 1, []];
}

const BAD_NUMBERS: [string, string][] = [
  ["1.5", "1.5"],
  ["0", "0"],
  ["-5", "-5"],
  ["1e308", "1e308"],
  ["2^53 + 1", "9007199254740993"],
  ["30 digits", "123456789012345678901234567890"],
  ["-0", "-0"],
  ["1e-400", "1e-400"],
];

const STRICT_EDGES: [string, (s: string) => string][] = [
  ["zero-width space", (s) => s + "\u200b"],
  ["right-to-left override", (s) => "\u202e" + s],
  ["NUL", (s) => s + "\u0000"],
  ["lone high surrogate", (s) => s + "\ud800"],
  ["BOM", (s) => "\ufeff" + s],
  ["trailing space", (s) => s + " "],
  [
    "fullwidth",
    (s) => s.replace(/[a-z0-9]/g, (c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)),
  ],
];

const FREE_EDGES: [string, (s: string) => string][] = [
  ["lone high surrogate", (s) => s + "\ud800"],
  ["lone low surrogate", (s) => "\udfff" + s],
  ["reversed surrogate pair", (s) => s + "\udc00\ud800"],
  ["NUL", (s) => s + "\u0000"],
];

/** Schema-level defects derived from a known valid body of the route. */
export function schemaBodyDefects(valid: Record<string, unknown>): BodyDefect[] {
  const out: BodyDefect[] = [];
  const I = ["INVALID_INPUT"];
  const d = (category: string, label: string, obj: unknown): BodyDefect => ({
    category,
    label,
    body: JSON.stringify(obj),
    codes: I,
    schema: true,
  });
  out.push(d("missing fields", "empty object", {}));
  for (const [field, value] of Object.entries(valid)) {
    const { [field]: _gone, ...rest } = valid;
    if (!OPTIONAL.has(field)) out.push(d("missing fields", `no ${field}`, rest));
    for (const w of wrongValues(value)) {
      // `null` for an optional field means the field is absent (docs/api.md): not a defect.
      if (w === null && OPTIONAL.has(field)) continue;
      out.push(d("wrong types", `${field}: ${JSON.stringify(w)}`, { ...valid, [field]: w }));
    }
    if (typeof value === "number") {
      for (const [label, raw] of BAD_NUMBERS) {
        const text = JSON.stringify({ ...valid, [field]: "__N__" }).replace('"__N__"', raw);
        out.push({
          category: "huge and odd numbers",
          label: `${field}: ${label}`,
          body: text,
          codes: I,
          schema: true,
        });
      }
    }
    if (typeof value === "string") {
      const edges = FREE_TEXT.has(field) ? FREE_EDGES : STRICT_EDGES;
      for (const [label, f] of edges) {
        out.push(d("Unicode edges", `${field}: ${label}`, { ...valid, [field]: f(value) }));
      }
      out.push(
        d("deep nesting", `${field}: nested object`, {
          ...valid,
          [field]: JSON.parse('{"a":'.repeat(200) + "1" + "}".repeat(200)),
        }),
      );
    }
  }
  out.push(d("extra fields", "unknown field", { ...valid, extra: 1 }));
  out.push(d("extra fields", "weight", { ...valid, weight: 5 }));
  out.push(
    d("extra fields", "key with a trailing space", { ...valid, [`${Object.keys(valid)[0]} `]: 1 }),
  );
  out.push(d("extra fields", "zero-width key", { ...valid, ["\u200bextra"]: 1 }));
  out.push({
    category: "extra fields",
    label: "__proto__",
    body: JSON.stringify(valid).replace(/^\{/, '{"__proto__":{"admin":true},'),
    codes: I,
    schema: true,
  });
  out.push(d("extra fields", "constructor.prototype", {
    ...valid,
    constructor: { prototype: { admin: true } },
  }));
  return out;
}

/** Byte length of a body we built (for the report). */
export function sizeOf(body: BodyInit): number {
  if (typeof body === "string") return enc.encode(body).length;
  if (body instanceof Uint8Array) return body.length;
  return -1;
}
