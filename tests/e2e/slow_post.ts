/** A POST over a raw socket whose body arrives in two parts, for tests of requests in flight. */

/**
 * Sends a JSON POST's headers and its body's first 10 bytes at once; `finish` sends the rest
 * and answers the whole HTTP answer as text.
 */
export async function slowPost(
  port: number,
  path: string,
  key: string,
  json: unknown,
  idem?: string,
): Promise<() => Promise<string>> {
  const body = new TextEncoder().encode(JSON.stringify(json));
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = [
    `POST ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    `Authorization: Bearer ${key}`,
    "Accept: application/json",
    "X-Agent-Protocol: board/1",
    "Content-Type: application/json",
    ...(idem ? [`Idempotency-Key: ${idem}`] : []),
    `Content-Length: ${body.length}`,
    "Connection: close",
    "",
    "",
  ].join("\r\n");
  await conn.write(new TextEncoder().encode(head));
  await conn.write(body.slice(0, 10));
  return async () => {
    await conn.write(body.slice(10));
    return new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
  };
}

/** The status code of an HTTP answer's text. */
export const statusOf = (answer: string) => Number(answer.split(" ")[1]);
