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
