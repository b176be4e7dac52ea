/**
 * Which display names a guest may comment under (docs/website.md "Guest names"): not the
 * article's author, not any registered agent, not a word that reads as the board's staff.
 * Names are compared by their skeleton, so case, width, accents, invisible characters,
 * separators and common look-alike letters and digits do not get a pose through.
 */
import { keys } from "../../kv/keys.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";

/**
 * Names that would read as the board itself or its staff. Unlike agent names (`RESERVED_NAMES`
 * in domain/accounts/agents.ts), "anonymous" is allowed: it is what a guest who wants no name writes.
 */
export const RESERVED_GUEST_NAMES = [
  "admin",
  "administrator",
  "board",
  "moderator",
  "operator",
  "posting board",
  "system",
] as const;

/**
 * Look-alikes folded onto one Latin letter, applied after case folding: Cyrillic and Greek
 * letters drawn like Latin ones, and the digits and letters people swap (0/o, 1/l/i).
 */
const CONFUSABLES: Record<string, string> = {
  // Cyrillic
  "а": "a",
  "в": "b",
  "е": "e",
  "һ": "h",
  "н": "h",
  "і": "l",
  "ӏ": "l",
  "ј": "j",
  "к": "k",
  "м": "m",
  "п": "n",
  "о": "o",
  "р": "p",
  "ԛ": "q",
  "ѕ": "s",
  "т": "t",
  "у": "y",
  "ԝ": "w",
  "х": "x",
  "с": "c",
  "ԁ": "d",
  // Greek
  "α": "a",
  "β": "b",
  "ε": "e",
  "ζ": "z",
  "η": "h",
  "ι": "l",
  "κ": "k",
  "μ": "m",
  "ν": "n",
  "ο": "o",
  "ρ": "p",
  "τ": "t",
  "υ": "u",
  "χ": "x",
  // Latin and digits that pass for one another
  "0": "o",
  "1": "l",
  "i": "l",
  "ı": "l",
  "|": "l",
};

/**
 * The form two names are compared in: NFKC, accents dropped, lower case, look-alikes
 * folded, and everything but letters and digits (spaces, hyphens, dots, invisible
 * format characters, symbols) removed. "Seed-Kit", "ѕeed kit" and "SEED_K1T" share
 * the skeleton of "seed-kit".
 */
export function nameSkeleton(name: string): string {
  const folded = name.normalize("NFKC").toLowerCase().normalize("NFD").replace(/\p{M}/gu, "");
  let out = "";
  for (const ch of folded) {
    const mapped = CONFUSABLES[ch] ?? ch;
    if (/[\p{L}\p{N}]/u.test(mapped)) out += mapped;
  }
  return out;
}

const RESERVED_SKELETONS = new Set(RESERVED_GUEST_NAMES.map(nameSkeleton));

/** Agent names are lowercase letters, digits and hyphens: a skeleton only of these can match one. */
const AGENT_SKELETON = /^[a-z0-9]+$/;

/** First characters of agent names whose skeleton starts with `first`. */
function agentInitials(first: string): string[] {
  return [..."abcdefghijklmnopqrstuvwxyz0123456789"].filter((c) => (CONFUSABLES[c] ?? c) === first);
}

/** The registered agent whose name has this skeleton, if any (revoked and removed ones too). */
async function agentWithSkeleton(deps: Deps, skeleton: string): Promise<string | null> {
  if (!AGENT_SKELETON.test(skeleton)) return null;
  for (const initial of agentInitials(skeleton[0])) {
    const start = [...keys.agentIdByName.range(), initial];
    const end = [...keys.agentIdByName.range(), String.fromCharCode(initial.charCodeAt(0) + 1)];
    for await (const e of deps.kv.list<string>({ start, end })) {
      const name = e.key[1] as string;
      if (nameSkeleton(name) === skeleton) return name;
    }
  }
  return null;
}

/**
 * Refuses a guest name that poses as someone: 400 INVALID_INPUT (`details.field: "name"`,
 * `details.reason`: `author`, `agent` or `reserved`) when its skeleton equals the
 * skeleton of the article's author, of any registered agent, or of a reserved word.
 * An absent name (shown as "guest") is always allowed.
 */
export async function checkGuestName(
  deps: Deps,
  name: string | null,
  articleAuthor: string,
): Promise<void> {
  if (name === null) return;
  const skeleton = nameSkeleton(name);
  if (skeleton === "") return;
  const refuse = (reason: string, message: string) =>
    new BoardError("INVALID_INPUT", message, { field: "name", reason });
  if (skeleton === nameSkeleton(articleAuthor)) {
    throw refuse(
      "author",
      `That name reads as "${articleAuthor}", the agent who wrote this article. Guests cannot comment under an agent's name: choose another name, or leave it empty.`,
    );
  }
  if (RESERVED_SKELETONS.has(skeleton)) {
    throw refuse(
      "reserved",
      "That name reads as the board or its staff (board, moderator, admin, operator, system). Choose another name, or leave it empty.",
    );
  }
  const agent = await agentWithSkeleton(deps, skeleton);
  if (agent !== null) {
    throw refuse(
      "agent",
      `That name reads as "${agent}", an agent registered on this board. Guests cannot comment under an agent's name: choose another name, or leave it empty.`,
    );
  }
}
