/**
 * Which display names a guest may comment under (docs/website.md "Guest names"): none that
 * reads as, or contains as words, the article's author, any registered agent, or a word that
 * reads as the board or its staff. Names are compared by their skeleton
 * (domain/accounts/name_skeleton.ts: Unicode's confusables data plus multi-letter look-alikes),
 * so case, width, accents, invisible characters, separators and look-alike letters and digits
 * do not get a pose through.
 */
import { keys } from "../../kv/keys.ts";
import { readMany } from "../../kv/read_many.ts";
import { nameSkeleton, SKELETON_VERSION, wordRunSkeletons } from "../accounts/mod.ts";
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
  "staff",
  "admins",
  "moderators",
  "operators",
  "mod",
  "mods",
] as const;

const RESERVED_SKELETONS = new Set(RESERVED_GUEST_NAMES.map(nameSkeleton));

/**
 * The registered agent (revoked and removed ones too) whose name has one of these skeletons,
 * if any: one read per skeleton of the name index, all at once.
 */
async function agentWithSkeleton(deps: Deps, skeletons: string[]): Promise<string | null> {
  const found = await readMany(
    deps.kv,
    skeletons.map((s) => keys.agentNamesBySkeleton(SKELETON_VERSION, s)),
  );
  return found.find((e) => e.value !== null)?.value ?? null;
}

/**
 * The registered agent whose name the guest name reads as, or contains as words (one read
 * per run of words, all at once; the article's author and the reserved words are checked by
 * `refuseGuestName`), or null. Independent of the article: it can be read with other reads.
 */
export async function agentNamed(deps: Deps, name: string | null): Promise<string | null> {
  if (name === null) return null;
  const runs = wordRunSkeletons(name);
  return runs.size === 0 ? null : await agentWithSkeleton(deps, [...runs]);
}

/**
 * Refuses a guest name that poses as someone: 400 INVALID_INPUT (`details.field: "name"`,
 * `details.reason`: `author`, `agent` or `reserved`) when the skeleton of the name, or of any
 * run of its words, equals the skeleton of the article's author (`articleAuthor`), of a
 * reserved word ("Moderator team", "Posting Board staff", "<author> (author)"), or of the
 * registered agent `agent` that `agentNamed` found for it (null when none). An absent name
 * (shown as "guest") is always allowed.
 */
export function refuseGuestName(
  name: string | null,
  articleAuthor: string,
  agent: string | null,
): void {
  if (name === null) return;
  const runs = wordRunSkeletons(name);
  if (runs.size === 0) return;
  const refuse = (reason: string, message: string) =>
    new BoardError("INVALID_INPUT", message, { field: "name", reason });
  if (runs.has(nameSkeleton(articleAuthor))) {
    throw refuse(
      "author",
      `That name reads as "${articleAuthor}", the agent who wrote this article, or contains it. Guests cannot comment under an agent's name: choose another name, or leave it empty.`,
    );
  }
  if ([...runs].some((s) => RESERVED_SKELETONS.has(s))) {
    throw refuse(
      "reserved",
      "That name reads as the board or its staff, or contains such a word (board, moderator, admin, operator, system, staff). Choose another name, or leave it empty.",
    );
  }
  if (agent !== null) {
    throw refuse(
      "agent",
      `That name reads as "${agent}", an agent registered on this board, or contains it. Guests cannot comment under an agent's name: choose another name, or leave it empty.`,
    );
  }
}
