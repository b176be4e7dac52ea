/**
 * A KV Connect server for tests (protocol: denoland/denokv proto/kv-connect.md), so that the
 * board can run on a networked store through Deno's own client:
 * `Deno.openKv("http://127.0.0.1:PORT")` with `DENO_KV_ACCESS_TOKEN` set to its token.
 *
 * - `POST /` is the metadata exchange: protocol versions 1 to 3 (the highest the client
 *   offers), one strong endpoint (`/data`), a data path token of its own, expiry in an hour.
 * - `POST /data/snapshot_read` and `POST /data/atomic_write` are the data path, over a local
 *   store (raw_store.ts). Watch, queues (enqueue), versionstamped keys and sums of numbers
 *   are not implemented: they are answered 4xx (so Deno's client fails instead of retrying).
 *
 * Each data path call can be delayed (half before it is served, half after) to play a store
 * in a far region. Run it alone with
 * `deno run -A tests/kv_connect/server.ts [--port N] [--delay MS] [--path FILE] [--token T]`.
 */
import { ProtobufError } from "./protobuf.ts";
import {
  decodeAtomicWrite,
  decodeSnapshotRead,
  encodeAtomicWriteOutput,
  encodeSnapshotReadOutput,
} from "./datapath.ts";
import { BadRequest, RawStore } from "./raw_store.ts";

export interface KvConnectServerOptions {
  /** Listen port on 127.0.0.1; a free one when left out. */
  port?: number;
  /** Milliseconds each data path call takes on top of its work. */
  delayMs?: number;
  /** The local store file behind it; ":memory:" when left out. */
  path?: string;
  /** The access token clients must present; a random one when left out. */
  token?: string;
}

/** Data path calls served, by kind. */
export interface KvConnectCalls {
  metadata: number;
  snapshotRead: number;
  atomicWrite: number;
  /** Atomic writes refused because a check failed. */
  checkFailures: number;
  /** Requests answered 4xx. */
  refused: number;
}

export interface KvConnectServer extends AsyncDisposable {
  /** The URL to give `Deno.openKv` (and `BOARD_KV`). */
  url: string;
  /** The access token (`DENO_KV_ACCESS_TOKEN`). */
  token: string;
  port: number;
  /** The data path delay now in force (ms); may be changed while it runs. */
  delayMs: number;
  /** Counts of the calls served so far. */
  calls: KvConnectCalls;
  /** Stops serving and closes the local store. */
  close(): Promise<void>;
}

/** The database id every client is given. */
const DATABASE_ID = "8c6c5a5e-4f0e-4a3a-9d3c-6b1f2a7e0b11";
const DATA_PATH = "/data";

const text = (status: number, body: string) =>
  new Response(body, { status, headers: { "content-type": "text/plain" } });

const protobuf = (body: Uint8Array<ArrayBuffer>) =>
  new Response(body, { headers: { "content-type": "application/x-protobuf" } });

const sleep = (ms: number) => ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();

/** The bearer token of a request, or null. */
function bearer(req: Request): string | null {
  const m = /^bearer (.+)$/i.exec(req.headers.get("authorization") ?? "");
  return m ? m[1] : null;
}

/** The protocol version the client and this server share, or null. */
function chooseVersion(body: string): number | null {
  if (body.trim() === "") return 1;
  const parsed = JSON.parse(body) as { supportedVersions?: unknown };
  const offered = parsed.supportedVersions;
  if (!Array.isArray(offered)) throw new BadRequest("supportedVersions must be an array");
  const shared = offered.filter((v) => v === 1 || v === 2 || v === 3) as number[];
  return shared.length ? Math.max(...shared) : null;
}

/**
 * Starts a KV Connect server on 127.0.0.1 backed by a local store (":memory:" or `path`);
 * resolves once it listens.
 */
export async function startKvConnectServer(
  options: KvConnectServerOptions = {},
): Promise<KvConnectServer> {
  const token = options.token ?? crypto.randomUUID();
  const dataToken = `data-${crypto.randomUUID()}`;
  const kv = await Deno.openKv(options.path ?? ":memory:");
  const store = new RawStore(kv);
  const calls: KvConnectCalls = {
    metadata: 0,
    snapshotRead: 0,
    atomicWrite: 0,
    checkFailures: 0,
    refused: 0,
  };
  let origin = "";

  const metadata = async (req: Request): Promise<Response> => {
    if (bearer(req) !== token) return text(401, "invalid access token");
    const version = chooseVersion(await req.text());
    if (version === null) return text(400, "no protocol version in common");
    calls.metadata++;
    return Response.json({
      version,
      databaseId: DATABASE_ID,
      // Version 1 needs an absolute URL; later versions resolve it against the request's.
      endpoints: [{ url: version === 1 ? origin + DATA_PATH : DATA_PATH, consistency: "strong" }],
      token: dataToken,
      expiresAt: new Date(Date.now() + 3600_000).toISOString(),
    });
  };

  const dataPath = async (req: Request, method: string): Promise<Response> => {
    if (bearer(req) !== dataToken) return text(401, "invalid data path token");
    const version = req.headers.get("x-denokv-version");
    const db = version === null
      ? req.headers.get("x-transaction-domain-id")
      : req.headers.get("x-denokv-database-id");
    if (version !== null && version !== "2" && version !== "3") {
      return text(400, "unsupported protocol version");
    }
    if (db !== DATABASE_ID) return text(400, "unknown database id");
    const body = new Uint8Array(await req.arrayBuffer());
    if (method === "snapshot_read") {
      const out = await store.snapshotRead(decodeSnapshotRead(body));
      calls.snapshotRead++;
      return protobuf(encodeSnapshotReadOutput(out));
    }
    if (method === "atomic_write") {
      const out = await store.atomicWrite(decodeAtomicWrite(body));
      calls.atomicWrite++;
      if (!out.ok) calls.checkFailures++;
      return protobuf(encodeAtomicWriteOutput(out));
    }
    return text(404, `${method} is not implemented by this server`);
  };

  const server: KvConnectServer = {
    url: "",
    token,
    port: 0,
    delayMs: options.delayMs ?? 0,
    calls,
    close: async () => {
      await http.shutdown();
      kv.close();
    },
    [Symbol.asyncDispose]: () => server.close(),
  };

  const handle = async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname;
    // Not part of the protocol: the counts, for a person watching a standalone server.
    if (req.method === "GET" && path === "/calls") return Response.json(calls);
    if (req.method !== "POST") return text(405, "POST only");
    try {
      if (path === "/") return await metadata(req);
      if (path.startsWith(`${DATA_PATH}/`)) {
        const delay = server.delayMs;
        await sleep(delay / 2);
        const res = await dataPath(req, path.slice(DATA_PATH.length + 1));
        await sleep(delay - delay / 2);
        return res;
      }
      return text(404, "not found");
    } catch (e) {
      if (e instanceof BadRequest || e instanceof ProtobufError || e instanceof SyntaxError) {
        return text(400, e.message);
      }
      throw e;
    }
  };

  const { promise: listening, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const http = Deno.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    onListen: resolve,
  }, async (req) => {
    const res = await handle(req);
    if (res.status >= 400 && res.status < 500) calls.refused++;
    return res;
  });
  const addr = await listening;
  origin = `http://127.0.0.1:${addr.port}`;
  server.url = origin;
  server.port = addr.port;
  return server;
}

if (import.meta.main) {
  const arg = (name: string) => {
    const i = Deno.args.indexOf(`--${name}`);
    return i >= 0 ? Deno.args[i + 1] : undefined;
  };
  const server = await startKvConnectServer({
    port: arg("port") ? Number(arg("port")) : undefined,
    delayMs: arg("delay") ? Number(arg("delay")) : undefined,
    path: arg("path"),
    token: arg("token"),
  });
  console.log(`KV Connect server on ${server.url} token ${server.token}`);
  Deno.addSignalListener("SIGTERM", () => server.close().then(() => Deno.exit(0)));
}
