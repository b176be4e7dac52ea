/**
 * Reads a request body as a bounded stream: never more than `limit` plus one chunk is
 * held, whatever the client declares or sends; as bytes, as strict UTF-8 text, or as a web
 * form's parameters. Every body the board reads (JSON, forms, MCP, OAuth) goes through here,
 * and each caller supplies its own errors (board error objects for the board, OAuth errors
 * for the authorization server, JSON-RPC errors for MCP).
 */

interface BodyReadErrors {
  /**
   * The body passed `limit`; `observed` bytes were read before stopping, `read` holds them
   * (the last chunk included).
   */
  tooLarge(observed: number, read: Uint8Array[]): Error;
  /** The client stopped sending before the end of its body (or sent it too slowly). */
  incomplete(read: number): Error;
  /**
   * The body is sent with a `Content-Encoding` (gzip, br, …), which `coding` names: every body
   * the board takes is read as sent, so an encoded one is refused rather than misread.
   */
  encoded(coding: string): Error;
  /** A `Content-Length` above the limit, refused before anything is read (else `tooLarge`). */
  declaredTooLarge?(declared: number): Error;
}

/** What a text read adds: a body that is not UTF-8. */
interface TextReadErrors extends BodyReadErrors {
  notUtf8(read: number): Error;
}

/** What a form read adds: a body declared as another type than a web form. */
interface FormReadErrors extends TextReadErrors {
  notForm(): Error;
}

/**
 * How long a body may take to arrive, from the first read: a client that declares more than
 * it sends and stalls gets its refusal (as an incomplete body) instead of holding the request
 * open for as long as it likes.
 */
export const BODY_TIME_LIMIT_MS = 30_000;

/** Requests whose body is no longer wanted (`abandonBody`). */
const abandoned = new WeakSet<Request>();
/** How to end the read under way of a request's body, while one is. */
const endReading = new WeakMap<Request, () => void>();

/**
 * Stops reading `req`'s body, for a request whose answer no longer depends on it (its
 * credential was refused while the body was still arriving): a read under way ends at once
 * as an incomplete body, and a read started later is refused as one before it reads anything.
 * The body is let go, so a client that stalls holds nothing.
 */
export function abandonBody(req: Request): void {
  abandoned.add(req);
  endReading.get(req)?.();
}

/**
 * The bytes of a request body, at most `limit` of them, within `timeLimitMs`; an incomplete
 * body once `abandonBody` gave it up.
 */
export async function readBoundedBytes(
  req: Request,
  limit: number,
  errors: BodyReadErrors,
  timeLimitMs = BODY_TIME_LIMIT_MS,
): Promise<Uint8Array> {
  if (abandoned.has(req)) {
    await req.body?.cancel().catch(() => {});
    throw errors.incomplete(0);
  }
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > limit) {
    await req.body?.cancel().catch(() => {});
    throw errors.declaredTooLarge?.(declared) ?? errors.tooLarge(declared, []);
  }
  if (!req.body) return new Uint8Array(0);
  const coding = req.headers.get("content-encoding")?.trim() ?? "";
  if (coding !== "" && coding.toLowerCase() !== "identity") {
    await req.body.cancel().catch(() => {});
    throw errors.encoded(coding);
  }
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), timeLimitMs);
    endReading.set(req, () => resolve("late"));
  });
  try {
    while (true) {
      let chunk: ReadableStreamReadResult<Uint8Array> | "late";
      try {
        chunk = await Promise.race([reader.read(), late]);
      } catch {
        throw errors.incomplete(total);
      }
      if (chunk === "late") {
        await reader.cancel().catch(() => {});
        throw errors.incomplete(total);
      }
      if (chunk.done) break;
      total += chunk.value.length;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        throw errors.tooLarge(total, [...chunks, chunk.value]);
      }
      chunks.push(chunk.value);
    }
  } finally {
    clearTimeout(timer);
    endReading.delete(req);
    reader.releaseLock();
  }
  const bytes = new Uint8Array(total);
  let off = 0;
  for (const ch of chunks) {
    bytes.set(ch, off);
    off += ch.length;
  }
  return bytes;
}

/** A bounded body as strict UTF-8 text (a leading byte-order mark is dropped). */
export async function readBoundedText(
  req: Request,
  limit: number,
  errors: TextReadErrors,
): Promise<string> {
  const bytes = await readBoundedBytes(req, limit, errors);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw errors.notUtf8(bytes.length);
  }
}

/** Whether a request declares an ordinary web form body (`application/x-www-form-urlencoded`). */
function declaresForm(req: Request): boolean {
  return /^application\/x-www-form-urlencoded\s*(;|$)/i.test(req.headers.get("content-type") ?? "");
}

/**
 * A bounded web form body as its parameters; another declared type is `notForm`. The body and
 * what its percent escapes stand for must both be UTF-8 (`notUtf8`): `URLSearchParams` would
 * read `Caf%E9` (a Latin-1 "é") as "Caf\uFFFD", another text than was sent. A `%` that starts no
 * escape stays a `%`, as forms read it.
 */
export async function readBoundedForm(
  req: Request,
  limit: number,
  errors: FormReadErrors,
): Promise<URLSearchParams> {
  if (!declaresForm(req)) throw errors.notForm();
  const text = await readBoundedText(req, limit, errors);
  if (!escapesAreUtf8(text)) throw errors.notUtf8(new TextEncoder().encode(text).length);
  return new URLSearchParams(text);
}

/**
 * Whether every name and value of a form body decodes to UTF-8 (escapes as bytes). A `%` that
 * starts no escape is a `%` (`%25`), as `URLSearchParams` reads it; `&` and `=` are not escapes,
 * so the body can be decoded whole.
 */
function escapesAreUtf8(form: string): boolean {
  if (!form.includes("%")) return true;
  try {
    decodeURIComponent(form.replace(/%(?![0-9A-Fa-f]{2})/g, "%25"));
    return true;
  } catch {
    return false;
  }
}
