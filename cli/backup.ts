/**
 * `deno task kv:export [file]` / `deno task kv:import <file>`: the whole store as NDJSON.
 * The store is the one BOARD_KV names (default ./data/board.kv).
 */
import { loadConfig } from "../routes/config.ts";
import { exportKv, importKv } from "./backup_format.ts";
import { openKv } from "../kv/open.ts";

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

const [command, file] = Deno.args;
if (command !== "export" && command !== "import") {
  console.error("usage: deno task kv:export [file.ndjson] | deno task kv:import <file.ndjson>");
  Deno.exit(2);
}
const config = loadConfig(Deno.env.toObject(), true);
const kv = await openKv(config.kvPath);
try {
  if (command === "export") {
    const out = file
      ? await Deno.open(file, { write: true, create: true, truncate: true })
      : Deno.stdout;
    const enc = new TextEncoder();
    const n = await exportKv(kv, async (line) => {
      await out.write(enc.encode(line));
    });
    if (file) (out as Deno.FsFile).close();
    console.error(`exported ${n} entries`);
  } else {
    if (!file) throw new Error("import needs a file");
    const src = await Deno.open(file);
    const n = await importKv(kv, readLines(src.readable));
    console.error(`imported ${n} entries`);
  }
} finally {
  kv.close();
}
