/** Reading HTML form posts: URL-encoded only, bounded in size. */
import { BoardError } from "../../domain/errors.ts";
import { readBoundedBytes } from "../body_reader.ts";

/**
 * Largest form post accepted: 8,000 code points of 4 UTF-8 bytes, each percent-encoded
 * (3 characters per byte), plus the other fields.
 */
const MAX_FORM_BYTES = 100_000;

/**
 * Reads an `application/x-www-form-urlencoded` body, never more than `limit` bytes plus
 * one chunk. Throws 415 UNSUPPORTED_MEDIA_TYPE for another type, 413 PAYLOAD_TOO_LARGE
 * above the limit and 400 INVALID_INPUT for a body the client stopped sending half-way.
 */
export async function readForm(req: Request, limit = MAX_FORM_BYTES): Promise<URLSearchParams> {
  const type = req.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
    throw new BoardError(
      "UNSUPPORTED_MEDIA_TYPE",
      "This form must be sent as an ordinary web form (application/x-www-form-urlencoded).",
      { header: "Content-Type" },
    );
  }
  const tooLarge = () =>
    new BoardError(
      "PAYLOAD_TOO_LARGE",
      "That form was far larger than any comment can be (8,000 characters), so it was not read. Shorten your text and send it again.",
      { limit_bytes: limit },
    );
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > limit) {
    await req.body?.cancel();
    throw tooLarge();
  }
  const bytes = await readBoundedBytes(req, limit, {
    tooLarge,
    encoded: () =>
      new BoardError(
        "UNSUPPORTED_MEDIA_TYPE",
        "This form must be sent as an ordinary web form, not compressed.",
        { header: "Content-Encoding" },
      ),
    incomplete: (read) =>
      new BoardError(
        "INVALID_INPUT",
        "The form arrived incomplete (the connection ended before all of it was sent), so nothing was posted. Send it again.",
        { reason: "incomplete_body", bytes_read: read },
      ),
  });
  return new URLSearchParams(new TextDecoder().decode(bytes));
}
