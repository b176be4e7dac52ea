/**
 * The PyPI packages the Python client tests need (the official MCP Python SDK, every package
 * pinned in tests/e2e/python_clients/requirements.txt), installed with pip from PyPI into a
 * virtual environment in the same cache directory as the Node packages (tests/e2e/node_deps.ts),
 * outside the repository, once per requirements file: `python-<hash of the file>`.
 *
 * Test files run in parallel, so the install is serialised by an exclusive lock on a file
 * there; a finished install leaves a marker and is reused by every later run.
 */
import { cacheRoot, installOnce, lockHash } from "./node_deps.ts";
import { runTool, toolOutput } from "./run_tool.ts";

const CLIENTS = new URL("./python_clients/", import.meta.url);
const INSTALL_TIMEOUT_MS = 5 * 60_000;

/**
 * The Python interpreter of a virtual environment holding the pinned packages, installing
 * it first if needed.
 */
export async function pythonWithSdk(): Promise<string> {
  const requirements = await Deno.readTextFile(new URL("requirements.txt", CLIENTS));
  const dir = `${cacheRoot()}/python-${await lockHash(requirements)}`;
  const python = `${dir}/venv/bin/python`;
  await installOnce(dir, async () => {
    await Deno.remove(`${dir}/venv`, { recursive: true }).catch(() => {});
    await Deno.writeTextFile(`${dir}/requirements.txt`, requirements);
    const steps: [string, string[]][] = [
      ["python3", ["-m", "venv", `${dir}/venv`]],
      [python, [
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--only-binary=:all:",
        "-r",
        `${dir}/requirements.txt`,
      ]],
    ];
    for (const [program, args] of steps) {
      const r = await runTool(program, args, { cwd: dir, timeoutMs: INSTALL_TIMEOUT_MS });
      if (r.code !== 0) {
        throw new Error(`Installing the Python test packages failed in ${dir}\n${toolOutput(r)}`);
      }
    }
  });
  return python;
}

if (import.meta.main) console.log(`Python test packages: ${await pythonWithSdk()}`);
