/** Runs wrk (Debian's package, installed on demand) and parses its figures. */

export interface LoadResult {
  rps: number;
  p50ms: number;
  p99ms: number;
  requests: number;
  errors: number;
}

/** Makes sure wrk is installed (apt, never a downloaded binary). */
export async function ensureWrk(): Promise<void> {
  const has = await new Deno.Command("sh", { args: ["-c", "command -v wrk"], stdout: "null" })
    .output();
  if (has.success) return;
  const install = await new Deno.Command("sh", {
    args: ["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk"],
    stdout: "null",
    stderr: "inherit",
  }).output();
  if (!install.success) throw new Error("wrk is required: apt-get install wrk");
}

function toMs(v: string): number {
  const m = v.match(/^([\d.]+)(us|ms|s|m)$/);
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60000;
}

/** Parses wrk's --latency output. */
export function parseWrk(out: string): LoadResult {
  const rps = Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? 0);
  const p50 = toMs(out.match(/\s50%\s+(\S+)/)?.[1] ?? "");
  const p99 = toMs(out.match(/\s99%\s+(\S+)/)?.[1] ?? "");
  const requests = Number(out.match(/(\d+) requests in/)?.[1] ?? 0);
  const non2xx = Number(out.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0);
  const sock = out.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const socketErrors = sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return { rps, p50ms: p50, p99ms: p99, requests, errors: non2xx + socketErrors };
}

/** Runs wrk against `url` with a Lua script (for headers, bodies and per-request keys). */
export async function runWrk(
  url: string,
  lua: string,
  options: { connections?: number; seconds?: number; threads?: number } = {},
): Promise<LoadResult> {
  const script = await Deno.makeTempFile({ suffix: ".lua" });
  try {
    await Deno.writeTextFile(script, lua);
    const { connections = 64, seconds = 5, threads = 2 } = options;
    const out = await new Deno.Command("wrk", {
      args: [
        "-t",
        String(threads),
        "-c",
        String(connections),
        "-d",
        `${seconds}s`,
        "--latency",
        "-s",
        script,
        url,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    if (!out.success) throw new Error(`wrk failed: ${text}`);
    return parseWrk(text);
  } finally {
    await Deno.remove(script);
  }
}

/** Lua string literal. */
export function luaString(s: string): string {
  return JSON.stringify(s);
}

/** A Lua script sending one fixed request. */
export function fixedRequestLua(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): string {
  const hs = Object.entries(headers).map(([k, v]) =>
    `wrk.headers[${luaString(k)}] = ${luaString(v)}`
  ).join("\n");
  return `wrk.method = ${luaString(method)}\n${hs}\n${
    body ? `wrk.body = ${luaString(body)}\n` : ""
  }` +
    `request = function() return wrk.format(nil, ${luaString(path)}) end\n`;
}
