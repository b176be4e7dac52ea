/**
 * Runs an external program (node, python3, curl, npm) for the real-client tests with a
 * bounded time: a program that overruns is killed and the test fails with a message that
 * says which program, how long it was given, and what it printed so far.
 */
import assert from "node:assert/strict";

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ToolOptions {
  /** Milliseconds before the program is killed (SIGKILL). */
  timeoutMs: number;
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string;
}

/** Runs `program args…` to completion or until `timeoutMs`; never throws on a non-zero exit. */
export async function runTool(
  program: string,
  args: string[],
  opts: ToolOptions,
): Promise<ToolResult> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      cwd: opts.cwd,
      env: opts.env,
      stdin: opts.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new Error(
      `${program} is not installed; the real-client tests need it (.ci/run installs it)`,
    );
  }
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const out = { text: "" }, err = { text: "" };
  const reading = Promise.all([collect(child.stdout, out), collect(child.stderr, err)]);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, opts.timeoutMs);
  const status = await child.status;
  clearTimeout(timer);
  // A killed program's own children may hold the pipes open: then report what came so far.
  if (!timedOut) await reading;
  const result = { code: status.code, stdout: out.text, stderr: err.text };
  if (timedOut) {
    throw new Error(
      `${program} ${args.join(" ")} did not finish within ${opts.timeoutMs / 1000} s ` +
        `and was killed.\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`,
    );
  }
  return result;
}

/** Appends a stream's text to `into.text` as it arrives. */
async function collect(stream: ReadableStream<Uint8Array>, into: { text: string }): Promise<void> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) into.text += decoder.decode(chunk, { stream: true });
  into.text += decoder.decode();
}

/** A failure message with everything the program printed. */
export function toolOutput(r: ToolResult): string {
  return `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
}

/**
 * Runs a client that prints one JSON event a line, answering each event but `done` with
 * `onEvent` as it comes (a consent page clicked, say). Returns the `done` event; fails on a
 * non-zero exit, on an overrun of `timeoutMs` (the program is killed) and without `done`.
 */
export async function runEventClient(
  program: string,
  args: string[],
  timeoutMs: number,
  onEvent: (event: Record<string, unknown>) => Promise<void>,
): Promise<Record<string, unknown>> {
  const child = new Deno.Command(program, { args, stdout: "piped", stderr: "piped" }).spawn();
  const stderr = new Response(child.stderr).text();
  const seen: string[] = [];
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, timeoutMs);
  let done: Record<string, unknown> | undefined;
  try {
    for await (const event of jsonLines(child.stdout, seen)) {
      if (event.event === "done") done = event;
      else await onEvent(event);
    }
    const status = await child.status;
    const err = await stderr;
    assert.ok(!timedOut, `the ${program} client did not finish within ${timeoutMs / 1000} s`);
    assert.equal(status.code, 0, `${program} exited ${status.code}\n${seen.join("\n")}\n${err}`);
  } finally {
    clearTimeout(timer);
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
    await child.status;
    await stderr.catch(() => "");
  }
  assert.ok(done, seen.join("\n"));
  return done;
}

/** Reads a stream as JSON lines, one at a time, keeping each raw line in `seen`. */
async function* jsonLines(stream: ReadableStream<Uint8Array>, seen: string[]) {
  let buffered = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      seen.push(line);
      yield JSON.parse(line) as Record<string, unknown>;
    }
  }
}

/** Whether `program` can be started (it is on the PATH). */
function installed(program: string): boolean {
  try {
    new Deno.Command(program, { args: ["version"], stdout: "null", stderr: "null" }).outputSync();
    return true;
  } catch {
    return false;
  }
}

/**
 * True when the Go client tests must be skipped (and says so): `go` is not installed (a machine
 * with only Node and npm) and BOARD_REQUIRE_GO is not `1`. `.ci/run` installs Debian's Go and sets
 * it, which makes a missing `go` a failure.
 */
export function skipGoTests(): boolean {
  if (installed("go") || Deno.env.get("BOARD_REQUIRE_GO") === "1") return false;
  console.warn(
    "Go client tests skipped: go is not installed (apt-get install golang-go). " +
      "Set BOARD_REQUIRE_GO=1 to make this a failure.",
  );
  return true;
}
