/**
 * `deno task kv:export [file]` / `deno task kv:import <file>`: the whole store as NDJSON
 * (cli/backup_format.ts). The store is the one BOARD_KV names (default ./data/board.kv). A
 * refusal is one line on stderr and exit code 1.
 */
import { loadConfig } from "../routes/config.ts";
import { BackupRefused, checkBackup, exportKv, importKv, StoreChanged } from "./backup_format.ts";
import { commitLockPath } from "../kv/commit_turns.ts";
import { isKvFile, openKv } from "../kv/open.ts";

/** Splits a byte stream into lines. */
async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    rest += chunk;
    const parts = rest.split("\n");
    rest = parts.pop() ?? "";
    yield* parts;
  }
  if (rest) yield rest;
}

const enc = new TextEncoder();

/** Writes the whole line (a write may take only part of it). */
async function writeAll(out: { write(p: Uint8Array): Promise<number> }, line: string) {
  let bytes = enc.encode(line);
  while (bytes.length) bytes = bytes.subarray(await out.write(bytes));
}

/** How many times an export to a file starts again when the store changed while it was read. */
const EXPORT_TRIES = 3;
const STOP_WRITES = "stop the board (or its writes) while exporting";

/**
 * The file an export to `file` replaces: the file a symbolic link leads to (the link stays a
 * link, as when the backup was written into it), and that file's permission bits when it
 * exists (a backup only its owner may read stays so), else null.
 */
async function exportTarget(file: string): Promise<{ path: string; mode: number | null }> {
  let path = file;
  for (let links = 0; links < 40; links++) {
    const info = await Deno.lstat(path).catch(() => null);
    if (!info) break;
    if (!info.isSymlink) return { path, mode: info.mode === null ? null : info.mode & 0o7777 };
    const to = await Deno.readLink(path);
    const cut = path.lastIndexOf("/");
    path = to.startsWith("/") || cut < 0 ? to : `${path.slice(0, cut + 1)}${to}`;
  }
  return { path, mode: null };
}

/**
 * Exports into `file` through a file beside it (`<file>.part`), renamed over `file` once
 * whole: a refused export leaves `file` as it was. When the store changed while it was read
 * (`StoreChanged`), the export starts again, `EXPORT_TRIES` times in all.
 */
async function exportToFile(kv: Deno.Kv, file: string): Promise<number> {
  const target = await exportTarget(file);
  const part = `${target.path}.part`;
  for (let tried = 1;; tried++) {
    const out = await Deno.open(part, { write: true, create: true, truncate: true });
    try {
      if (target.mode !== null) await Deno.chmod(part, target.mode);
      const n = await exportKv(kv, (line) => writeAll(out, line));
      out.close();
      await Deno.rename(part, target.path);
      return n;
    } catch (e) {
      try {
        out.close();
      } catch { /* closed already */ }
      await Deno.remove(part).catch(() => {});
      if (!(e instanceof StoreChanged)) throw e;
      if (tried === EXPORT_TRIES) {
        throw new StoreChanged(`${e.message}, on each of ${EXPORT_TRIES} tries: ${STOP_WRITES}`);
      }
      console.error(`kv:export: ${e.message}; exporting again (${tried + 1} of ${EXPORT_TRIES})`);
    }
  }
}

const [command, ...rest] = Deno.args;
const withoutEndLine = rest.includes("--without-end-line");
const file = rest.find((a) => !a.startsWith("--"));
if (command !== "export" && command !== "import") {
  console.error(
    "usage: deno task kv:export [file.ndjson] | deno task kv:import [--without-end-line] <file.ndjson>",
  );
  Deno.exit(2);
}

/** Refuses with one line (no stack trace) and exit code 1. */
function refuse(why: string): never {
  console.error(`kv:${command}: ${why}`);
  Deno.exit(1);
}

let config;
try {
  config = loadConfig(Deno.env.toObject(), true);
} catch (e) {
  refuse(e instanceof Error ? e.message : String(e));
}
if (command === "import" && !file) refuse("name the backup file to import");
if (command === "import") {
  await Deno.stat(file!).catch(() => refuse(`no file ${file}`));
  // The file first: a refused import opens (and so creates) no store.
  await checkBackup(readLines(Deno.openSync(file!).readable), !withoutEndLine).catch((e) =>
    e instanceof BackupRefused ? refuse(`${e.message}; nothing was written`) : Promise.reject(e)
  );
}
// A misspelt BOARD_KV would open (and create) an empty store: exporting it would write an empty
// backup without a word.
const storeFile = config.kvPath;
if (command === "export" && isKvFile(storeFile)) {
  const found = await Deno.stat(storeFile).then(() => true, () => false);
  if (!found) refuse(`no store at ${storeFile} (BOARD_KV): nothing to export`);
  // `kv:export FILE` names the backup to write, not the store to read: written over the store
  // or a file of its own beside it, the backup would destroy the store.
  // Compared as real paths; a file that does not exist yet by its folder's real path.
  const resolved = (path: string) =>
    Deno.realPath(path).catch(async () => {
      const cut = path.lastIndexOf("/");
      const folder = await Deno.realPath(cut < 0 ? "." : path.slice(0, cut) || "/");
      return `${folder}/${path.slice(cut + 1)}`;
    }).catch(() => path);
  const store = await resolved(storeFile);
  const ownFiles = [store, `${store}-wal`, `${store}-shm`, commitLockPath(store)];
  if (file && ownFiles.includes(await resolved(file))) {
    refuse(
      `${file} is the store BOARD_KV names, or one of its files: the export writes the backup ` +
        "to the file named, so name a new file; nothing was written",
    );
  }
}
// A store that cannot be opened (a KV Connect server down or refusing the token, a folder not
// writable): named in one line, as main.ts does.
const kv = await openKv(config.kvPath).catch((e) => {
  const why = e instanceof Error ? e.message : String(e);
  return refuse(
    why.includes("BOARD_KV")
      ? why
      : `the store ${config.kvPath ?? "(the platform's)"} (BOARD_KV) cannot be opened: ${why}`,
  );
});
try {
  if (command === "export") {
    const n = file
      ? await exportToFile(kv, file)
      : await exportKv(kv, (l) => writeAll(Deno.stdout, l));
    console.error(`exported ${n} entries`);
  } else {
    const open = () => {
      const src = Deno.openSync(file!);
      return readLines(src.readable);
    };
    const n = await importKv(kv, open, { endLine: !withoutEndLine });
    console.error(`imported ${n} entries`);
  }
} catch (e) {
  if (e instanceof StoreChanged && !file) {
    kv.close();
    refuse(
      `${e.message}; the output ends without an end line, in a line that says so (an import ` +
        `refuses it): ${STOP_WRITES}`,
    );
  }
  if (e instanceof BackupRefused || e instanceof Deno.errors.NotFound) {
    kv.close();
    refuse(`${e.message}; nothing was written`);
  }
  throw e;
} finally {
  kv.close();
}
