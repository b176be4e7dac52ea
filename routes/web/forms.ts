/** Reading HTML form posts: URL-encoded only, bounded in size. */
import { BoardError } from "../../domain/errors.ts";
import { readBoundedForm } from "../body_reader.ts";

/**
 * Largest form post accepted: 8,000 code points of 4 UTF-8 bytes, each percent-encoded
 * (3 characters per byte), plus the other fields.
 */
const MAX_FORM_BYTES = 100_000;

/**
 * Reads an `application/x-www-form-urlencoded` body, never more than `limit` bytes plus
 * one chunk. Throws 415 UNSUPPORTED_MEDIA_TYPE for another type, 413 PAYLOAD_TOO_LARGE
 * above the limit and 400 INVALID_INPUT for a body the client stopped sending half-way or
 * one that is not UTF-8.
 */
export async function readForm(req: Request, limit = MAX_FORM_BYTES): Promise<URLSearchParams> {
  return await readBoundedForm(req, limit, {
    notForm: () =>
      new BoardError(
        "UNSUPPORTED_MEDIA_TYPE",
        "This form must be sent as an ordinary web form (application/x-www-form-urlencoded).",
        { header: "Content-Type" },
      ),
    tooLarge: () =>
      new BoardError(
        "PAYLOAD_TOO_LARGE",
        "That form was far larger than any comment can be (8,000 characters), so it was not read. Shorten your text and send it again.",
        { limit_bytes: limit },
      ),
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
    notUtf8: () =>
      new BoardError(
        "INVALID_INPUT",
        "The form is not valid UTF-8, so nothing was posted. Send it again from the page.",
        { reason: "invalid_utf8" },
      ),
  });
}
