/**
 * The npm packages the Node client tests need (the MCP SDK, the MCP conformance suite, and
 * the @hey-api/openapi-ts client generator with its TypeScript peer, pinned in
 * tests/e2e/node_clients/package-lock.json), installed with `npm ci` from the npm
 * registry into a cache directory outside the repository, once per lock file.
 *
 * The directory is `$BOARD_NODE_CACHE`, else `$XDG_CACHE_HOME/posting-board`, else
 * `~/.cache/posting-board`, then `node-<hash of the lock file>`. Test files run in parallel,
 * so the install is serialised by an exclusive lock on a file there; a finished install
 * leaves a marker and is reused by every later run.
 */
import { runTool, toolOutput } from "./run_tool.ts";

const CLIENTS = new URL("./node_clients/", import.meta.url);
const INSTALL_TIMEOUT_MS = 5 * 60_000;

/** The cache directory the real-client packages are installed under (outside the repository). */
export function cacheRoot(): string {
  const own = Deno.env.get("BOARD_NODE_CACHE");
  if (own) return own;
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  if (xdg) return `${xdg}/posting-board`;
  return `${Deno.env.get("HOME") ?? Deno.cwd()}/.cache/posting-board`;
}

/** A short hash naming one install of a lock file. */
export async function lockHash(lock: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(lock));
  return [...new Uint8Array(digest).slice(0, 8)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/**
 * Runs `install` once per `dir`: test files run in parallel, so the install is serialised by
 * an exclusive lock on a file there, and a finished install leaves a marker that every later
 * run (and every waiting one) takes as done.
 */
export async function installOnce(dir: string, install: () => Promise<void>): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const done = `${dir}/.installed`;
  using lockFile = await Deno.open(`${dir}/.install-lock`, { create: true, write: true });
  await lockFile.lock(true);
  try {
    try {
      await Deno.stat(done);
      return;
    } catch { /* not installed yet */ }
    await install();
    await Deno.writeTextFile(done, new Date().toISOString());
  } finally {
    await lockFile.unlock();
  }
}

/**
 * The directory holding `node_modules` with the pinned packages, installing it first if
 * needed. Scripts that import those packages must run from this directory (see `nodeScript`).
 */
export async function nodeModulesDir(): Promise<string> {
  const pkg = await Deno.readTextFile(new URL("package.json", CLIENTS));
  const lock = await Deno.readTextFile(new URL("package-lock.json", CLIENTS));
  const dir = `${cacheRoot()}/node-${await lockHash(pkg + lock)}`;
  await installOnce(dir, async () => {
    await Deno.writeTextFile(`${dir}/package.json`, pkg);
    await Deno.writeTextFile(`${dir}/package-lock.json`, lock);
    const r = await runTool(
      "npm",
      ["ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
      { cwd: dir, timeoutMs: INSTALL_TIMEOUT_MS },
    );
    if (r.code !== 0) {
      throw new Error(`npm ci of the Node test packages failed in ${dir}\n${toolOutput(r)}`);
    }
  });
  return dir;
}

/**
 * Copies tests/e2e/node_clients/<name> next to the installed `node_modules` (Node resolves
 * packages from the script's own directory) and returns its path there.
 */
export async function nodeScript(name: string): Promise<string> {
  const dir = await nodeModulesDir();
  const target = `${dir}/${name}`;
  const tmp = `${target}.${crypto.randomUUID()}.tmp`;
  await Deno.copyFile(new URL(name, CLIENTS), tmp);
  await Deno.rename(tmp, target);
  return target;
}

if (import.meta.main) console.log(`Node test packages in ${await nodeModulesDir()}`);
