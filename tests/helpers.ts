/** Test harness: a fresh in-memory board per test, request builders and assertions. */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { type Config, testConfig } from "../routes/config.ts";
import { type Deps, makeDeps } from "../domain/deps.ts";
import { createApp } from "../routes/app.ts";
import { prepareService } from "../routes/service.ts";
import { versionedKv } from "../kv/versioned_kv.ts";
import { readCache } from "../domain/read_cache.ts";
import { KvMeter, setMeterSource } from "../kv/meter.ts";

export interface TestBoard extends AsyncDisposable {
  app: ReturnType<typeof createApp>;
  deps: Deps;
  clock: ManualClock;
  kv: Deno.Kv;
  /** Sends a request as if from `network` (default 127.0.0.1). */
  request(path: string, init?: RequestInit, network?: string): Promise<Response>;
}

/**
 * Opens a fresh `:memory:` board; use with `await using`. The rules post that a real
 * first start creates is left out unless `{ rulesPost: true }` (so feeds start empty).
 */
export async function testBoard(
  overrides: Partial<Config> = {},
  options: { rulesPost?: boolean } = {},
): Promise<TestBoard> {
  return await boardOn(":memory:", new ManualClock(), overrides, options);
}

/**
 * Opens a board on the KV at `path` with `clock` (two calls on one file are two service
 * instances sharing a store).
 */
export async function boardOn(
  path: string,
  clock: ManualClock,
  overrides: Partial<Config> = {},
  options: {
    rulesPost?: boolean;
    wrapKv?: (raw: Deno.Kv) => Deno.Kv;
    /** How long a KV call may take before it is given up (kv/store_deadline.ts). */
    deadlineMs?: number;
  } = {},
): Promise<TestBoard> {
  // Versioned like the service's own handle, so the read caches are on (kv/versioned_kv.ts).
  const raw = await Deno.openKv(path);
  const kv = versionedKv(options.wrapKv ? options.wrapKv(raw) : raw, undefined, {
    deadlineMs: options.deadlineMs,
  });
  const deps = makeDeps(kv, clock, testConfig(overrides));
  await prepareService(deps, { rulesPost: options.rulesPost ?? false });
  const app = createApp(deps);
  return {
    app,
    deps,
    clock,
    kv,
    request: async (path, init, network = "127.0.0.1") =>
      await app.request(path, init, { remoteAddr: { hostname: network } }),
    [Symbol.asyncDispose]: () => Promise.resolve(raw.close()),
  };
}

let keyCounter = 0;
/** A fresh valid Idempotency-Key. */
export function idemKey(): string {
  return `test-key-${Date.now().toString(36)}-${(keyCounter++).toString(36)}-${
    crypto.randomUUID().slice(0, 8)
  }`;
}

/** Standard agent headers (plus bearer and JSON content type when given). */
export function agentHeaders(
  apiKey?: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    accept: "application/json",
    "x-agent-protocol": "board/1",
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
    ...extra,
  };
}

/** A JSON request init with agent headers. */
export function jsonInit(
  method: string,
  body: unknown,
  apiKey?: string,
  extra: Record<string, string> = {},
): RequestInit {
  return {
    method,
    headers: agentHeaders(apiKey, { "content-type": "application/json", ...extra }),
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

let rpcCounter = 0;
/** The request init of a POST of `body` as it is to `/mcp` with a bearer credential. */
export function mcpPost(
  bearer: string,
  body: BodyInit,
  headers: Record<string, string> = {},
): RequestInit {
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${bearer}`,
      ...headers,
    },
    body,
  };
}

/** The request init of one JSON-RPC message to `/mcp` with a bearer credential (and `headers`). */
export function mcpInit(
  bearer: string,
  method: string,
  params: unknown = {},
  headers: Record<string, string> = {},
): RequestInit {
  const message = { jsonrpc: "2.0", id: ++rpcCounter, method, params };
  return mcpPost(bearer, JSON.stringify(message), {
    "mcp-protocol-version": "2025-06-18",
    ...headers,
  });
}

/**
 * One stateless JSON-RPC request to `/mcp` with a bearer credential, as an MCP client sends
 * it after initialising (the server is stateless, so no initialize is needed first).
 */
export function mcpRequest(
  board: TestBoard,
  bearer: string,
  method: string,
  params: unknown = {},
  network?: string,
): Promise<Response> {
  return board.request("/mcp", mcpInit(bearer, method, params), network);
}

let netCounter = 0;
/** A network address no other request in this process has used (keeps per-network limits apart). */
export function freshNetwork(): string {
  const n = ++netCounter;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

let nameCounter = 0;
/** Registers an agent and returns its id, name and key. */
export async function register(
  board: TestBoard,
  name = `agent-${(nameCounter++).toString(36)}-${crypto.randomUUID().slice(0, 6)}`,
  network = freshNetwork(),
): Promise<{ id: string; name: string; key: string }> {
  const res = await board.request(
    "/v1/agents",
    jsonInit("POST", { name, participation_basis: "owner_directed" }),
    network,
  );
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return { id: body.id, name: body.name, key: body.api_key };
}

/** Registers `count` agents one after another (each from its own network). */
export async function registerMany(
  board: TestBoard,
  count: number,
): Promise<Array<{ id: string; name: string; key: string }>> {
  const agents = [];
  for (let i = 0; i < count; i++) agents.push(await register(board));
  return agents;
}

/** Creates a root thread; returns the receipt. */
export async function post(
  board: TestBoard,
  key: string,
  fields: { title?: string; body?: string; topic?: string } = {},
  idem = idemKey(),
  network = freshNetwork(),
): Promise<{ id: string; seq: number; thread_id: string | null; url: string }> {
  const res = await board.request(
    "/v1/posts",
    jsonInit(
      "POST",
      {
        title: fields.title ?? "A title",
        body: fields.body ?? "A body",
        ...(fields.topic ? { topic: fields.topic } : {}),
      },
      key,
      {
        "idempotency-key": idem,
      },
    ),
    network,
  );
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body;
}

/** Replies to a thread; returns the receipt. */
export async function reply(
  board: TestBoard,
  key: string,
  rootId: string,
  text = "A reply",
  extra: Record<string, unknown> = {},
): Promise<{ id: string; seq: number; thread_id: string | null; url: string }> {
  const res = await board.request(
    `/v1/posts/${rootId}/replies`,
    jsonInit("POST", { body: text, ...extra }, key, { "idempotency-key": idemKey() }),
    freshNetwork(),
  );
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body;
}

/** GET with agent headers; returns status and parsed body. */
export async function getJson(board: TestBoard, path: string, key?: string) {
  const res = await board.request(path, { headers: agentHeaders(key) });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** Asserts that `res` has `status` and discards its body. */
export async function assertStatus(res: Response, status: number): Promise<void> {
  assert.equal(res.status, status);
  await res.body?.cancel();
}

/** The status of a response, its body discarded. */
export async function statusOf(res: Promise<Response>): Promise<number> {
  const r = await res;
  await r.body?.cancel();
  return r.status;
}

/** Asserts a board error object with a status and code; returns its details. */
export async function assertError(
  response: Response | Promise<Response>,
  status: number,
  code: string,
) {
  const res = await response;
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.error?.code, code, JSON.stringify(body));
  assert.equal(typeof body.error.message, "string");
  assert.equal(typeof body.docs, "string");
  return body.error.details ?? {};
}

/** Reads `path` twice: the second answer must come from the read cache, unchanged. */
export async function cachedRead(board: TestBoard, path: string, key: string) {
  const stats = readCache(board.deps).stats;
  const first = await getJson(board, path, key);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const hits = stats.hits;
  const again = await getJson(board, path, key);
  assert.equal(stats.hits, hits + 1, `${path}: the repeat read was not served from the cache`);
  assert.deepEqual(again.body, first.body);
  return again.body;
}

/** Runs `send` under a lockstep KV meter: its answer and its sequential KV round trips. */
export async function metered<T>(send: () => Promise<T>): Promise<{ res: T; depth: number }> {
  const meter = new KvMeter({ lockstep: true });
  setMeterSource(() => meter);
  try {
    const res = await send();
    return { res, depth: meter.roundTrips };
  } finally {
    setMeterSource(() => undefined);
  }
}

/** A `wrapKv` for `boardOn` whose `get` calls go through `through`, which may call the store's own `get`. */
export function getsThrough(through: (get: () => Promise<unknown>) => Promise<unknown>) {
  return (raw: Deno.Kv) =>
    new Proxy(raw, {
      get(target, name) {
        const v = Reflect.get(target, name, target);
        if (name !== "get" || typeof v !== "function") {
          return typeof v === "function" ? v.bind(target) : v;
        }
        return (...args: Parameters<Deno.Kv["get"]>) => through(() => v.apply(target, args));
      },
    });
}

/**
 * A `wrapKv` for `boardOn` that notes every key read by `get` and `getMany` in `read`
 * (cleared by the test between steps): which entries an operation reads.
 */
export function keysRead(): { read: Deno.KvKey[]; wrapKv: (raw: Deno.Kv) => Deno.Kv } {
  const read: Deno.KvKey[] = [];
  const wrapKv = (raw: Deno.Kv) =>
    new Proxy(raw, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (prop === "getMany") {
          return (ks: Deno.KvKey[], ...rest: []) => {
            read.push(...ks);
            return target.getMany(ks, ...rest);
          };
        }
        if (prop === "get") {
          return (k: Deno.KvKey, ...rest: []) => {
            read.push(k);
            return target.get(k, ...rest);
          };
        }
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  return { read, wrapKv };
}

/** What `fn` logs with console.warn, line by line. */
export async function warnings(fn: () => Promise<unknown>): Promise<string[]> {
  const warned: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warned.push(args.join(" "));
  try {
    await fn();
  } finally {
    console.warn = warn;
  }
  return warned;
}
