/**
 * `deno task kv:export [file]` / `deno task kv:import <file>`: the whole store as NDJSON
 * (cli/backup_format.ts). The store is the one BOARD_KV names (default ./data/board.kv). A
 * refusal is one line on stderr and exit code 1.
 */
import { loadConfig } from "../routes/config.ts";
import { BackupRefused, checkBackup, exportKv, importKv } from "./backup_format.ts";
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
}
const kv = await openKv(config.kvPath);
try {
  if (command === "export") {
    // Opened at the first line: a refused export leaves no file.
    let out: Deno.FsFile | typeof Deno.stdout | null = file ? null : Deno.stdout;
    const enc = new TextEncoder();
    const n = await exportKv(kv, async (line) => {
      out ??= await Deno.open(file!, { write: true, create: true, truncate: true });
      await out.write(enc.encode(line));
    });
    if (file) (out as Deno.FsFile | null)?.close();
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
  if (e instanceof BackupRefused || e instanceof Deno.errors.NotFound) {
    kv.close();
    refuse(`${e.message}; nothing was written`);
  }
  throw e;
} finally {
  kv.close();
}
