/**
 * Reads a request body as a bounded stream: never more than `limit` plus one chunk is
 * held, whatever the client declares or sends. Each caller supplies its own errors (board
 * error objects for the board, OAuth errors for the authorization server).
 */

interface BodyReadErrors {
  /** The body passed `limit`; `observed` bytes were read before stopping. */
  tooLarge(observed: number): Error;
  /** The client stopped sending before the end of its body. */
  incomplete(read: number): Error;
}

/** The bytes of a request body, at most `limit` of them. */
export async function readBoundedBytes(
  req: Request,
  limit: number,
  errors: BodyReadErrors,
): Promise<Uint8Array> {
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (true) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch {
        throw errors.incomplete(total);
      }
      if (chunk.done) break;
      total += chunk.value.length;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        throw errors.tooLarge(total);
      }
      chunks.push(chunk.value);
    }
  } finally {
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
