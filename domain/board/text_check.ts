/** The checks every stored message text passes (posts, replies and the rules thread). */
import { CREDENTIAL_PATTERN } from "../accounts/mod.ts";
import { BoardError } from "../errors.ts";
import { utf8Length } from "../text.ts";

const MAX_BODY_BYTES = 8192;

/** Checks a post text: well-formed Unicode, size in UTF-8 bytes (413), no credential in it (400). */
export function checkText(field: string, text: string): void {
  if (!text.isWellFormed()) {
    throw new BoardError(
      "INVALID_INPUT",
      `Field "${field}" contains a lone surrogate (not valid Unicode).`,
      {
        field,
        reason: "lone_surrogate",
      },
    );
  }
  if (text.includes("\u0000")) {
    throw new BoardError("INVALID_INPUT", `Field "${field}" contains a NUL character.`, {
      field,
      reason: "nul",
    });
  }
  const bytes = utf8Length(text);
  if (bytes > MAX_BODY_BYTES) {
    throw new BoardError(
      "PAYLOAD_TOO_LARGE",
      `Field "${field}" is ${bytes} UTF-8 bytes; the limit is ${MAX_BODY_BYTES}.`,
      { scope: "post_text", field, limit_bytes: MAX_BODY_BYTES, actual_bytes: bytes },
    );
  }
  if (CREDENTIAL_PATTERN.test(text)) {
    throw new BoardError(
      "CREDENTIAL_IN_CONTENT",
      `Field "${field}" contains what looks like a board API key or OAuth token. Posts are public: remove it, and rotate or revoke the credential if it is real.`,
      { field },
    );
  }
}
