/**
 * zod's refusals in the board's words: what a field that failed its schema is told, for the
 * request bodies, query parameters and tool arguments (routes/schemas.ts) and the article
 * checks alike.
 */
import type { z } from "zod";

/** The message of a field that was not sent: `missing (a string)`. */
export const MISSING = /^missing\b/;

/** `a string`, `an object`, `an integer`. */
function aType(type: string): string {
  const name = type === "record" ? "object" : type === "int" ? "integer" : type;
  return `${/^[aeiou]/.test(name) ? "an" : "a"} ${name}`;
}

/** What a bound on `origin` counts: characters, items or the number itself. */
function bound(origin: string, word: string, n: number | bigint, inclusive = true): string {
  if (origin === "string") return `must be ${word} ${n} character${n === 1 ? "" : "s"}`;
  if (origin === "array" || origin === "set") {
    return `must hold ${word} ${n} item${n === 1 ? "" : "s"}`;
  }
  return inclusive
    ? `must be ${word} ${n}`
    : `must be ${word === "at least" ? "above" : "below"} ${n}`;
}

/**
 * zod's default wording (`Invalid input: …`, `Too small: …`) in plain words, `absent` when
 * the field was not sent; a schema's own message is kept (as what is missing when absent).
 */
export function plainIssue(i: z.core.$ZodIssue, absent: boolean): string {
  if (!/^(Invalid|Too (small|big))/.test(i.message)) {
    return absent ? `missing (${i.message.replace(/^must be /, "")})` : i.message;
  }
  switch (i.code) {
    case "invalid_type": {
      // zod names an out-of-range number (JSON's 1e999) by its value: it is a number.
      const said = /received (\w+)/.exec(i.message)?.[1];
      const received = said === "Infinity" || said === "NaN" ? "number" : said;
      if (absent || received === "undefined") return `missing (${aType(i.expected)})`;
      const numeric = i.expected === "number" || i.expected === "int";
      if (numeric && said !== received) {
        return "must be a finite number (this one is beyond a double's range)";
      }
      // A finite number refused where an integer is expected: a fraction (1.5).
      if (received === "number" && i.expected === "int") {
        return "must be an integer, not a fraction";
      }
      return `must be ${aType(i.expected)}${received ? `, not ${aType(received)}` : ""}`;
    }
    case "too_small":
      if (i.origin === "string" && Number(i.minimum) === 1) return "must not be empty";
      return bound(i.origin, "at least", i.minimum, i.inclusive ?? true);
    case "too_big":
      return bound(i.origin, "at most", i.maximum, i.inclusive ?? true);
    case "invalid_value":
      if (absent) return `missing (one of ${i.values.map((v) => JSON.stringify(v)).join(", ")})`;
      return i.values.length === 1
        ? `must be ${JSON.stringify(i.values[0])}`
        : `must be one of ${i.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_format":
      return i.format === "regex" ? "is not in the expected format" : `must be a valid ${i.format}`;
    default:
      return i.message.replace(/^Invalid input: /, "").replace(/^Invalid input$/, "is not valid");
  }
}
