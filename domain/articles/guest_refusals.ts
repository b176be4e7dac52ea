/**
 * A guest's refused comment form, kept server-side so that the refusal can be shown at an
 * address that answers GET (Post/Redirect/Get; docs/website.md "Refusals"): the form post
 * stores it and redirects, the article page reads it back for the same session. One slot per
 * session (a newer refusal replaces the older one), kept for an hour; the text, which can be
 * longer than one KV value allows, is stored in parts beside it. Everything is written in one
 * commit and read in one `getMany`.
 */
import { keys } from "../../kv/keys.ts";
import { commitRetryingLock } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";

/** How long a refusal stays readable (seconds). */
export const GUEST_REFUSAL_SECONDS = 3600;
/** Bytes of text per KV value (the value limit is 64 KiB). */
const PART_BYTES = 60_000;
/** Parts a refusal's text may use: a form post is at most 100,000 bytes. */
const MAX_PARTS = 2;

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

interface StoredRefusal extends Omit<GuestRefusal, "text"> {
  parts: number;
}

interface StoredPart {
  id: string;
  bytes: Uint8Array;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    guestRefusals: StoredRefusal;
    guestRefusalTexts: StoredPart;
  }
}

/**
 * Keeps a refusal for `session` (its identity), replacing any earlier one; returns it with
 * its new id. A text beyond the parts' room (never from a form within the body limit) is cut.
 */
export async function keepGuestRefusal(
  deps: Deps,
  session: string,
  refusal: Omit<GuestRefusal, "id" | "expires_at">,
): Promise<GuestRefusal> {
  const id = deps.newId();
  const expires_at = deps.clock.now() + GUEST_REFUSAL_SECONDS;
  const bytes = new TextEncoder().encode(refusal.text).subarray(0, PART_BYTES * MAX_PARTS);
  const parts = Math.ceil(bytes.length / PART_BYTES);
  const { text: _text, ...rest } = refusal;
  const record: StoredRefusal = { ...rest, id, expires_at, parts };
  const expireIn = GUEST_REFUSAL_SECONDS * 1000;
  const res = await commitRetryingLock(() => {
    const op = deps.kv.atomic().set(keys.guestRefusals(session), record, { expireIn });
    for (let i = 0; i < MAX_PARTS; i++) {
      const key = keys.guestRefusalTexts(session, i);
      if (i < parts) {
        const part: StoredPart = { id, bytes: bytes.slice(i * PART_BYTES, (i + 1) * PART_BYTES) };
        op.set(key, part, { expireIn });
      } else op.delete(key);
    }
    return op;
  });
  if (!res.ok) throw new Error("storing a guest refusal failed");
  return { ...refusal, id, expires_at };
}

/**
 * The refusal `id` of `session` on article `postId`, or null when it is not this session's
 * latest, is about another article, or has expired.
 */
export async function guestRefusal(
  deps: Deps,
  session: string,
  postId: string,
  id: string,
): Promise<GuestRefusal | null> {
  const [head, ...parts] = await deps.kv.getMany([
    keys.guestRefusals(session),
    ...Array.from({ length: MAX_PARTS }, (_, i) => keys.guestRefusalTexts(session, i)),
  ]);
  const rec = head.value;
  if (!rec || rec.id !== id || rec.post_id !== postId) return null;
  if (rec.expires_at <= deps.clock.now()) return null;
  const mine = parts.slice(0, rec.parts).map((p) => p.value);
  if (mine.some((p) => p?.id !== id)) return null;
  const bytes = new Uint8Array(mine.reduce((n, p) => n + p!.bytes.length, 0));
  let at = 0;
  for (const p of mine) {
    bytes.set(p!.bytes, at);
    at += p!.bytes.length;
  }
  const { parts: _parts, ...rest } = rec;
  return { ...rest, text: new TextDecoder().decode(bytes) };
}
