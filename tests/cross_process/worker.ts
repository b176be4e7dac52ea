/**
 * One service instance in a process of its own, driven over stdin/stdout by the tests of
 * tests/cross_process/ (`instances.ts` starts it):
 * `deno run -A worker.ts <kv file> <config> turns|no-turns`.
 *
 * It opens its own KV handles on the shared file, exactly as the service does (a writer whose
 * commits take turns with other processes', and a reader, versioned: kv/open.ts), or with
 * `no-turns` a writer that shares no commit lock, as on Deno Deploy; it serves
 * requests through the real app. Its clock is set from each command, so all processes share
 * the test's time. Commands, one JSON line each, answered by `id`:
 * - `request`: an HTTP request through the app (`at`: the clock in ms, `network`: the
 *   client address); answers status, headers and body text.
 * - `hold`: the next commit that writes a key starting with `prefix` stops just before it
 *   reaches the store; the worker reports `held` and waits for `release` with the same id.
 * - `quiet`: answers once no KV operation of this process has been in flight for `idleMs`
 *   (every request has run up to a commit held, a lock, or its answer).
 * - `stats`: the refused commits and re-run attempts of this process so far, and how many of
 *   those waited for the store's write lock (a process-wide kv/meter.ts meter counts them).
 * Closing stdin closes the KV handles and ends the process.
 */
import { ManualClock } from "../../domain/clock.ts";
import { testConfig } from "../../routes/config.ts";
import { makeDeps } from "../../domain/deps.ts";
import { versionedKv } from "../../kv/versioned_kv.ts";
import { withCommitTurns } from "../../kv/commit_turns.ts";
import { createApp } from "../../routes/app.ts";
import { prepareService } from "../../routes/service.ts";
import { KvMeter, setMeterSource } from "../../kv/meter.ts";

type Command =
  | {
    id: number;
    type: "request";
    at: number;
    path: string;
    method: string;
    headers: [string, string][];
    body: string | null;
    network: string;
  }
  | { id: number; type: "hold"; prefix: string[] }
  | { id: number; type: "release"; hold: number }
  | { id: number; type: "quiet"; idleMs: number }
  | { id: number; type: "stats" };

const encoder = new TextEncoder();
let output = Promise.resolve();

/** Writes one JSON line to stdout (lines never interleave). */
function send(message: unknown): void {
  const bytes = encoder.encode(JSON.stringify(message) + "\n");
  output = output.then(async () => {
    for (let done = 0; done < bytes.length;) {
      done += await Deno.stdout.write(bytes.subarray(done));
    }
  });
}

/** KV operations of this process in flight (a held commit does not count). */
let inFlight = 0;
let lastActive = performance.now();

function track<T>(p: Promise<T>): Promise<T> {
  inFlight++;
  return p.finally(() => {
    inFlight--;
    lastActive = performance.now();
  });
}

/** Armed holds: the next commit writing under `prefix` waits for `release`. */
const holds: { id: number; prefix: string[] }[] = [];
const releases = new Map<number, () => void>();

function startsWith(key: Deno.KvKey, prefix: string[]): boolean {
  return prefix.every((part, i) => key[i] === part);
}

/** An atomic operation that records the keys it writes and may be held before its commit. */
function observedAtomic(op: Deno.AtomicOperation): Deno.AtomicOperation {
  const written: Deno.KvKey[] = [];
  const wrapper: Deno.AtomicOperation = new Proxy(op, {
    get(target, prop) {
      if (
        prop === "set" || prop === "delete" || prop === "sum" || prop === "min" || prop === "max"
      ) {
        return (key: Deno.KvKey, ...rest: unknown[]) => {
          written.push(key);
          (target[prop] as (...a: unknown[]) => unknown).call(target, key, ...rest);
          return wrapper;
        };
      }
      if (prop === "mutate") {
        return (...ms: Deno.KvMutation[]) => {
          for (const m of ms) written.push(m.key);
          target.mutate(...ms);
          return wrapper;
        };
      }
      if (prop === "commit") {
        return async () => {
          const i = holds.findIndex((h) => written.some((k) => startsWith(k, h.prefix)));
          if (i >= 0) {
            const [hold] = holds.splice(i, 1);
            const released = new Promise<void>((r) => releases.set(hold.id, r));
            send({ type: "held", hold: hold.id });
            await released;
          }
          return await track(target.commit());
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return wrapper;
}

/** A KV handle whose reads are counted and whose commits can be held. */
function observed(kv: Deno.Kv): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") return () => observedAtomic(target.atomic());
      if (prop === "get" || prop === "getMany") {
        return (...args: unknown[]) =>
          track((target[prop] as (...a: unknown[]) => Promise<unknown>).call(target, ...args));
      }
      if (prop === "list") {
        return (...args: Parameters<Deno.Kv["list"]>) => {
          const iter = target.list(...args);
          return {
            get cursor() {
              return iter.cursor;
            },
            next: () => track(iter.next()),
            [Symbol.asyncIterator]() {
              return this;
            },
          };
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

const [path, configJson, turns] = Deno.args;
const writer = turns === "no-turns"
  ? await Deno.openKv(path)
  : await withCommitTurns(await Deno.openKv(path), path);
const reader = await Deno.openKv(path);
// A held commit stops before it takes its turn (kv/commit_turns.ts): others keep theirs.
const kv = versionedKv(observed(writer), observed(reader));
const clock = new ManualClock();
const deps = makeDeps(kv, clock, testConfig(JSON.parse(configJson)));
await prepareService(deps, { rulesPost: false });
const app = createApp(deps);
/** Every KV call of this process reports here: its conflicts and retries (`stats`). */
const meter = new KvMeter();
setMeterSource(() => meter);

async function run(cmd: Command): Promise<unknown> {
  switch (cmd.type) {
    case "request": {
      clock.set(cmd.at / 1000);
      const res = await app.request(cmd.path, {
        method: cmd.method,
        headers: cmd.headers,
        body: cmd.body,
      }, { remoteAddr: { hostname: cmd.network } });
      return { status: res.status, headers: [...res.headers], body: await res.text() };
    }
    case "hold":
      holds.push({ id: cmd.id, prefix: cmd.prefix });
      return {};
    case "release": {
      const release = releases.get(cmd.hold);
      if (!release) throw new Error(`no commit is held for hold ${cmd.hold}`);
      releases.delete(cmd.hold);
      release();
      return {};
    }
    case "stats":
      return { conflicts: meter.conflicts, retries: meter.retries, busy: meter.busy };
    case "quiet": {
      // Requests sent just before may not have reached their first KV operation yet: the
      // quiet span starts no earlier than this command.
      const since = performance.now();
      while (inFlight > 0 || performance.now() - Math.max(lastActive, since) < cmd.idleMs) {
        await new Promise((r) => setTimeout(r, 5));
      }
      return {};
    }
  }
}

send({ type: "ready" });
const decoder = new TextDecoder();
let buffered = "";
const running = new Set<Promise<void>>();
for await (const chunk of Deno.stdin.readable) {
  buffered += decoder.decode(chunk, { stream: true });
  let nl: number;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const cmd = JSON.parse(buffered.slice(0, nl)) as Command;
    buffered = buffered.slice(nl + 1);
    const p = run(cmd).then(
      (result) => send({ id: cmd.id, result }),
      (e) => send({ id: cmd.id, error: e instanceof Error ? e.stack ?? e.message : String(e) }),
    );
    running.add(p);
    p.finally(() => running.delete(p));
  }
}
await Promise.all(running);
for (const release of releases.values()) release();
await output;
kv.close();
