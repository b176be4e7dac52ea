/**
 * A guest's refused comment form, kept server-side so that the refusal can be shown at an
 * address that answers GET (Post/Redirect/Get; docs/website.md "Refusals"): the form post
 * stores it and redirects, the article page reads it back for the same session. One slot per
 * session (a newer refusal replaces the older one), kept for an hour, in one KV value: the
 * text is kept up to `KEPT_TEXT_CODE_POINTS` (a longer one is cut, and the message says so),
 * so what a session makes the server keep stays far below the form's 100,000 bytes. A session
 * that has posted nothing costs nothing until it keeps a refusal, so those slots are what a
 * network's new sessions can make the server keep: limited per network per clock hour.
 */
import { keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import { limitOf, limitSpec } from "../limits/mod.ts";
import type { GuestSession } from "./guest_sessions.ts";
import { takeCodePoints } from "../text.ts";
import { GUEST_NAME_MAX, GUEST_TEXT_MAX } from "./guest_moderation.ts";
import { refusalMessageAt } from "./guest_comments.ts";

/** How long a refusal stays readable (seconds). */
const GUEST_REFUSAL_SECONDS = 3600;
/**
 * Characters of a refused text kept to show again: more than a comment may hold, so a text
 * refused for its length still has to be shortened before it can pass.
 */
export const KEPT_TEXT_CODE_POINTS = GUEST_TEXT_MAX + 1_000;
/**
 * Refusals kept for sessions that have posted nothing, in a slot the session did not hold
 * already, per network per fixed clock hour (times BOARD_LIMIT_SCALE).
 */
const UNUSED_SESSION_REFUSALS = limitSpec(
  "network_guest_session_refusals_per_hour",
  100,
  "network",
  "1h",
);
/** Characters of a refused name kept to show again. */
const KEPT_NAME_CODE_POINTS = GUEST_NAME_MAX * 2;

/** What the refused form showed: the guest's text and name, and why it was refused. */
export interface GuestRefusal {
  /** Names this refusal in the address (`?refusal=`); an older address shows no refusal. */
  id: string;
  post_id: string;
  /** The comment replied to, when the form was a reply. */
  parent_id: string | null;
  text: string;
  name: string;
  message: string;
  /** The field the refusal is about ("text", "name", "parent_id", "csrf", "form"). */
  field: string;
  /** The HTTP status of the refusal (400, 403, 409, 429). */
  status: number;
  /** The guest's earlier comment with the same text (a refused repeat). */
  earlier: string | null;
  /** Unix seconds after which a rate refusal's wait is over. */
  retry_at: number | null;
  expires_at: number;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    guestRefusals: GuestRefusal;
    guestSessionRefusalCounts: number;
  }
}

/**
 * Keeps a refusal for `session`, replacing any earlier one; returns it as kept (text and
 * name cut to what is kept, the message saying so) with its new id. For a session that has
 * posted nothing and holds no kept refusal, the slot counts against its network's hourly
 * allowance (`network`): when that is spent, nothing is kept and the answer is null.
 */
export async function keepGuestRefusal(
  deps: Deps,
  session: GuestSession,
  network: string,
  refusal: Omit<GuestRefusal, "id" | "expires_at">,
): Promise<GuestRefusal | null> {
  const text = takeCodePoints(refusal.text, KEPT_TEXT_CODE_POINTS);
  const cut = text.length < refusal.text.length;
  const name = takeCodePoints(refusal.name, KEPT_NAME_CODE_POINTS);
  const kept: GuestRefusal = {
    ...refusal,
    text,
    name,
    message: cut
      ? `${refusal.message} The form below keeps its first ${
        KEPT_TEXT_CODE_POINTS.toLocaleString("en-US")
      } characters.`
      : refusal.message,
    id: deps.newId(),
    expires_at: deps.clock.now() + GUEST_REFUSAL_SECONDS,
  };
  const slot = keys.guestRefusals(session.id);
  const expiry = { expireIn: GUEST_REFUSAL_SECONDS * 1000 };
  if (session.stored) {
    await deps.kv.set(slot, kept, expiry);
    return kept;
  }
  const now = deps.clock.now();
  const hour = now - (now % 3600);
  const counter = keys.guestSessionRefusalCounts(network, hour);
  const { value } = await transact(deps.kv, async (tx) => {
    const held = await tx.getNamed({ slot, counter });
    const free = held.slot.value === null || held.slot.value.expires_at <= now;
    if (free) {
      const used = held.counter.value ?? 0;
      if (used >= limitOf(deps, UNUSED_SESSION_REFUSALS)) return null;
      tx.set(counter, used + 1, { expireIn: 2 * 3600 * 1000 });
    }
    tx.set(slot, kept, expiry);
    return kept;
  });
  return value;
}

/**
 * The refusal `id` of `session` on article `postId`, or null when it is not this session's
 * latest, is about another article, or has expired; a rate refusal's message says the wait
 * left now (`refusalMessageAt`).
 */
export async function guestRefusal(
  deps: Deps,
  session: string,
  postId: string,
  id: string,
): Promise<GuestRefusal | null> {
  const rec = (await deps.kv.get(keys.guestRefusals(session))).value;
  if (!rec || rec.id !== id || rec.post_id !== postId) return null;
  // A refusal kept before texts were stored inline has no text: shown as an empty form.
  const now = deps.clock.now();
  if (rec.expires_at <= now || typeof rec.text !== "string") return null;
  return { ...rec, message: refusalMessageAt(rec.message, rec.retry_at, now) };
}
