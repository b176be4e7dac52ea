/** Opens the KV store named by BOARD_KV: a file path, ":memory:", or a KV Connect URL. */
import { versionedKv } from "./versioned_kv.ts";
import { withCommitTurns } from "./commit_turns.ts";
import { commitRetryingLock } from "./tx.ts";
import { keys } from "./keys.ts";

/** True when BOARD_KV names a remote store reached over KV Connect. */
export function isKvConnectUrl(path: string | undefined): boolean {
  return !!path && /^https?:\/\//i.test(path);
}

/** True when BOARD_KV names a local store file (not a KV Connect URL, ":memory:" or the default). */
export function isKvFile(path: string | undefined): path is string {
  return !!path && !isKvConnectUrl(path) && path !== ":memory:";
}

/**
 * Opens KV. A KV Connect URL is passed to `Deno.openKv` as is (Deno reads the token from
 * `DENO_KV_ACCESS_TOKEN`); undefined means the platform's default store (Deno Deploy).
 * A file path gets its folder created first. `open` is injectable for tests. The handle
 * bumps the read caches' version keys on every write (kv/versioned_kv.ts). A file gets a
 * second handle for reads, so that reads run while a commit is in flight (kv/versioned_kv.ts),
 * and its commits take turns with other processes' on the same file (kv/commit_turns.ts).
 */
export async function openKv(
  path: string | undefined,
  open: (path?: string) => Promise<Deno.Kv> = Deno.openKv,
): Promise<Deno.Kv> {
  if (isKvConnectUrl(path) && !Deno.env.get("DENO_KV_ACCESS_TOKEN")) {
    throw new Error("BOARD_KV is a KV Connect URL: set DENO_KV_ACCESS_TOKEN to its access token");
  }
  if (isKvFile(path)) {
    const dir = path.replace(/[^/]*$/, "");
    if (dir) await Deno.mkdir(dir, { recursive: true });
    const writer = await withCommitTurns(await open(path), path);
    return versionedKv(writer, await open(path));
  }
  return versionedKv(path === undefined ? await open() : await open(path));
}

/**
 * Refuses a store file this process can read but not write (a read-only file, folder or
 * file system): the runtime opens such a file without a word, and a board that has run on it
 * before writes nothing at start, so it would serve every read and fail every write. An empty
 * commit takes the file's write lock and changes no entry. Thrown as one line naming the store.
 */
export async function assertWritable(kv: Deno.Kv, path: string | undefined): Promise<void> {
  if (!isKvFile(path)) return;
  try {
    await commitRetryingLock(() => kv.atomic());
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new Error(
      `the store ${path} (BOARD_KV) cannot be written: ${why} Give this process write access to the file and its folder.`,
    );
  }
}

/**
 * Why a store must not be served or exported, or null: it holds the mark of an import that did
 * not finish (`deno task kv:import` stopped part-way: killed, out of memory, a lost session), so
 * it holds only part of a backup, and a board on it would serve that part and write into it.
 */
export async function unfinishedImport(kv: Deno.Kv): Promise<string | null> {
  const mark = (await kv.get(keys.metaImportUnfinished())).value;
  if (!mark) return null;
  const started = new Date(mark.started_at * 1000).toISOString();
  return `holds part of a backup: an import of ${mark.entries} entries started at ${started} ` +
    "did not finish (import the backup again into a new, empty store and point BOARD_KV at it)";
}

/** Refuses a store that holds part of a backup (`unfinishedImport`), naming the store. */
export async function assertNoUnfinishedImport(
  kv: Deno.Kv,
  path: string | undefined,
): Promise<void> {
  const why = await unfinishedImport(kv);
  if (why) throw new Error(`the store ${path ?? "(the platform's)"} (BOARD_KV) ${why}`);
}
