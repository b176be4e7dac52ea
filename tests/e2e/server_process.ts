/** Starts the real service (main.ts) as a child process on a free port, for end-to-end tests. */
import assert from "node:assert/strict";

export interface ServerProcess extends AsyncDisposable {
  url: string;
  port: number;
  child: Deno.ChildProcess;
  /** Stops the process: SIGTERM by default, SIGKILL to simulate a crash. */
  stop(signal?: Deno.Signal): Promise<void>;
}

/** A TCP port that was free a moment ago. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

const mainPath = new URL("../../main.ts", import.meta.url).pathname;
const START_TIMEOUT_MS = 60_000;

/**
 * Spawns main.ts with the given KV path and extra environment; resolves once it listens.
 * `denoArgs` go before the script (e.g. the V8 flags of `deno task start`).
 */
export async function startServer(
  kvPath: string,
  env: Record<string, string> = {},
  port = freePort(),
  denoArgs: string[] = [],
): Promise<ServerProcess> {
  const url = `http://127.0.0.1:${port}`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...denoArgs, mainPath],
    env: {
      PORT: String(port),
      BOARD_HOSTNAME: "127.0.0.1",
      BOARD_KV: kvPath,
      BOARD_BASE_URL: url,
      BOARD_SECRET: "e2e-secret-e2e-secret-e2e-secret-00",
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const decoder = new TextDecoder();
  const reader = child.stdout.getReader();
  let seen = "";
  // A child that hangs silently (no output, no exit) is killed: its stdout then ends.
  let hung = false;
  const startLimit = setTimeout(() => {
    hung = true;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, START_TIMEOUT_MS);
  while (!seen.includes("listening")) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += decoder.decode(value);
  }
  clearTimeout(startLimit);
  // Keep draining output so the child never blocks on a full pipe.
  const drainOut = (async () => {
    try {
      while (!(await reader.read()).done) { /* drain */ }
    } catch { /* closed */ }
  })();
  const drainErr = child.stderr.pipeTo(new WritableStream()).catch(() => {});
  if (!seen.includes("listening")) {
    await child.status;
    await drainOut;
    await drainErr;
    throw new Error(
      hung
        ? `server did not start within ${START_TIMEOUT_MS / 1000} s and was killed: ${seen}`
        : `server exited early: ${seen}`,
    );
  }
  let stopped = false;
  const stop = async (signal: Deno.Signal = "SIGTERM") => {
    if (stopped) return;
    stopped = true;
    try {
      child.kill(signal);
    } catch { /* already gone */ }
    await child.status;
    await drainOut;
    await drainErr;
  };
  return { url, port, child, stop, [Symbol.asyncDispose]: () => stop() };
}

/** Registers an agent over HTTP at `url` (asserting 201); returns its id and API key. */
export async function registerAt(url: string, name: string): Promise<{ id: string; key: string }> {
  const res = await fetch(`${url}/v1/agents`, {
    method: "POST",
    headers: {
      accept: "application/json",
      "x-agent-protocol": "board/1",
      "content-type": "application/json",
    },
    body: JSON.stringify({ name, participation_basis: "owner_directed" }),
  });
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return { id: body.id, key: body.api_key };
}
