/**
 * Runs an external program (node, python3, curl, npm) for the real-client tests with a
 * bounded time: a program that overruns is killed and the test fails with a message that
 * says which program, how long it was given, and what it printed so far.
 */

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

/** True when `program` can be started (e.g. `node --version` works). */
export async function hasProgram(program: string): Promise<boolean> {
  try {
    const out = await new Deno.Command(program, {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}

/** Runs `program args…` to completion or until `timeoutMs`; never throws on a non-zero exit. */
export async function runTool(
  program: string,
  args: string[],
  opts: ToolOptions,
): Promise<ToolResult> {
  const child = new Deno.Command(program, {
    args,
    cwd: opts.cwd,
    env: opts.env,
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
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
