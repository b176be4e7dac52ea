/**
 * Service instances in separate processes on one KV file (worker.ts), for tests that force
 * the interleavings across processes that matter: hold one process's commit just before it
 * reaches the store, let another process commit, release, check. Each instance looks like
 * a `TestBoard` to the shared helpers: its requests go to its process, while `deps` and
 * `kv` are the test process's own handle on the same file (to set up and inspect) and
 * `clock` is the one clock every process follows.
 */
import { ManualClock } from "../../domain/clock.ts";
import { type Config, testConfig } from "../../routes/config.ts";
import { type Deps, makeDeps } from "../../domain/deps.ts";
import { versionedKv } from "../../kv/versioned_kv.ts";
import { createApp } from "../../routes/app.ts";
import type { TestBoard } from "../helpers.ts";

/** How long any one answer from a worker may take. */
const ANSWER_MS = 20_000;
const WORKER = new URL("./worker.ts", import.meta.url).pathname;

/** A commit held in a worker: `reached` settles once it waits; `release` lets it go. */
export interface Hold {
  reached: Promise<void>;
  release(): Promise<void>;
}

interface Waiter {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** One worker process: a service instance with its own KV handles. */
export class Instance implements TestBoard {
  readonly name: string;
  readonly app: TestBoard["app"];
  readonly deps: Deps;
  readonly kv: Deno.Kv;
  readonly clock: ManualClock;
  #child: Deno.ChildProcess;
  #stdin: WritableStreamDefaultWriter<Uint8Array>;
  #nextId = 1;
  #waiters = new Map<number, Waiter>();
  #held = new Map<number, Waiter>();
  #heldEarly = new Set<number>();
  #stderr = "";
  #reading: Promise<void>;
  #readingErr: Promise<void>;
  #ready: Waiter | null = null;
  #started: Promise<void>;
  #ended: string | null = null;

  constructor(
    name: string,
    kvPath: string,
    config: Partial<Config>,
    local: Local,
    turns: boolean,
  ) {
    this.name = name;
    this.app = local.app;
    this.deps = local.deps;
    this.kv = local.deps.kv;
    this.clock = local.clock;
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        WORKER,
        kvPath,
        JSON.stringify(config),
        turns ? "turns" : "no-turns",
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#stdin = this.#child.stdin.getWriter();
    this.#started = new Promise((resolve, reject) => {
      this.#ready = this.#waiter("start", resolve as (v: unknown) => void, reject);
    });
    this.#reading = this.#read();
    this.#readingErr = this.#readErr();
  }

  /** Resolves when the worker has opened the store and is ready for commands. */
  ready(): Promise<void> {
    return this.#started;
  }

  #waiter(what: string, resolve: (v: unknown) => void, reject: (e: Error) => void): Waiter {
    const w: Waiter = {
      resolve,
      reject,
      timer: setTimeout(() => {
        reject(
          new Error(
            `${this.name}: ${what} got no answer within ${ANSWER_MS} ms${this.#stderrNote()}`,
          ),
        );
      }, ANSWER_MS),
    };
    return w;
  }

  #stderrNote(): string {
    return this.#stderr ? `\n--- ${this.name} stderr ---\n${this.#stderr.slice(-4000)}` : "";
  }

  async #read(): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of this.#child.stdout) {
      buffered += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        this.#dispatch(JSON.parse(buffered.slice(0, nl)));
        buffered = buffered.slice(nl + 1);
      }
    }
    this.#ended = `${this.name} ended its output${this.#stderrNote()}`;
    for (const w of [...this.#waiters.values(), ...this.#held.values(), this.#ready]) {
      if (!w) continue;
      clearTimeout(w.timer);
      w.reject(new Error(this.#ended));
    }
    this.#waiters.clear();
    this.#held.clear();
    this.#ready = null;
  }

  async #readErr(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.#child.stderr) {
      this.#stderr = (this.#stderr + decoder.decode(chunk, { stream: true })).slice(-20_000);
    }
  }

  #dispatch(msg: { type?: string; id?: number; hold?: number; result?: unknown; error?: string }) {
    if (msg.type === "ready") {
      const w = this.#ready!;
      clearTimeout(w.timer);
      w.resolve(undefined);
      this.#ready = null;
      return;
    }
    if (msg.type === "held") {
      const w = this.#held.get(msg.hold!);
      if (!w) return void this.#heldEarly.add(msg.hold!);
      this.#held.delete(msg.hold!);
      clearTimeout(w.timer);
      w.resolve(undefined);
      return;
    }
    const w = this.#waiters.get(msg.id!);
    if (!w) return;
    this.#waiters.delete(msg.id!);
    clearTimeout(w.timer);
    if (msg.error) w.reject(new Error(`${this.name}: ${msg.error}`));
    else w.resolve(msg.result);
  }

  #call(what: string, cmd: Record<string, unknown>): Promise<unknown> {
    if (this.#ended) return Promise.reject(new Error(this.#ended));
    const id = this.#nextId++;
    const answer = new Promise((resolve, reject) => {
      this.#waiters.set(id, this.#waiter(what, resolve, reject));
    });
    const line = new TextEncoder().encode(JSON.stringify({ id, ...cmd }) + "\n");
    this.#stdin.write(line).catch(() => {}); // a dead worker shows in the answer's timeout
    return answer;
  }

  /**
   * This process's refused commits and re-run attempts so far, and how many of those attempts
   * waited for the embedded store's write lock that another process held (kv/meter.ts).
   */
  async stats(): Promise<{ conflicts: number; retries: number; busy: number }> {
    return await this.#call("stats", { type: "stats" }) as {
      conflicts: number;
      retries: number;
      busy: number;
    };
  }

  /** Sends a request to the instance, as if from `network`, at the shared clock's time. */
  async request(path: string, init: RequestInit = {}, network = "127.0.0.1"): Promise<Response> {
    const body = init.body ?? null;
    if (body !== null && typeof body !== "string") throw new Error("only string bodies");
    const method = init.method ?? "GET";
    const r = await this.#call(`${method} ${path}`, {
      type: "request",
      at: this.clock.nowMs(),
      path,
      method,
      headers: [...new Headers(init.headers)],
      body,
      network,
    }) as { status: number; headers: [string, string][]; body: string };
    const nullBody = r.status === 204 || r.status === 304;
    return new Response(nullBody ? null : r.body, { status: r.status, headers: r.headers });
  }

  /** Holds this instance's next commit that writes a key under `prefix`. */
  async hold(prefix: string[]): Promise<Hold> {
    const id = this.#nextId;
    await this.#call("hold", { type: "hold", prefix });
    const reached = this.#heldEarly.delete(id) ? Promise.resolve() : new Promise<void>(
      (resolve, reject) => {
        this.#held.set(
          id,
          this.#waiter(`a commit under ${JSON.stringify(prefix)}`, resolve as () => void, reject),
        );
      },
    );
    return {
      reached,
      release: async () => {
        await reached;
        await this.#call("release", { type: "release", hold: id });
      },
    };
  }

  /**
   * Resolves once no KV operation of the instance has been in flight for `idleMs` (longer
   * spans also cover work between reads, such as hashing, on a busy machine).
   */
  async quiet(idleMs = 40): Promise<void> {
    await this.#call("quiet", { type: "quiet", idleMs });
  }

  /** Ends the worker (its stdin closes; it closes its KV handles and exits). */
  async close(): Promise<void> {
    await this.#stdin.close().catch(() => {});
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      try {
        this.#child.kill();
      } catch { /* already gone */ }
    }, ANSWER_MS);
    try {
      await Promise.all([this.#reading, this.#readingErr]);
      const status = await this.#child.status;
      if (killed) throw new Error(`${this.name} did not exit within ${ANSWER_MS} ms: killed`);
      if (!status.success) {
        throw new Error(`${this.name} exited with ${status.code}${this.#stderrNote()}`);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** The test process's own handle, deps and clock on the shared file. */
interface Local {
  deps: Deps;
  app: TestBoard["app"];
  clock: ManualClock;
}

/** A KV file in a temp folder, `n` worker instances on it and the test's own handle. */
export interface Cluster extends AsyncDisposable {
  /** The KV file every process opens. */
  path: string;
  instances: Instance[];
  clock: ManualClock;
  deps: Deps;
  kv: Deno.Kv;
}

/**
 * Starts `n` workers on one fresh KV file, all with `config` (over the test defaults). With
 * `turns: false` they share no commit lock file (kv/commit_turns.ts), as instances on Deno
 * Deploy or a KV Connect store do: only the store's checks order their commits, so a commit
 * held between its reads and the store (`whileHeld`) lets another process write anything.
 */
export async function cluster(
  n: number,
  config: Partial<Config> = {},
  { turns = true }: { turns?: boolean } = {},
): Promise<Cluster> {
  const dir = await Deno.makeTempDir({ prefix: "board-cross-process-" });
  const kvPath = `${dir}/board.kv`;
  const raw = await Deno.openKv(kvPath);
  const clock = new ManualClock();
  const deps = makeDeps(versionedKv(raw), clock, testConfig(config));
  const local: Local = { deps, app: createApp(deps), clock };
  const instances: Instance[] = [];
  const close = async () => {
    const closed = await Promise.allSettled(instances.map((i) => i.close()));
    raw.close();
    await Deno.remove(dir, { recursive: true });
    for (const c of closed) if (c.status === "rejected") throw c.reason;
  };
  try {
    // All at once: their start-up records race for a new file, as on a real deployment.
    for (let i = 0; i < n; i++) {
      instances.push(new Instance(`process ${"ABCDEFGH"[i]}`, kvPath, config, local, turns));
    }
    await Promise.all(instances.map((i) => i.ready()));
  } catch (e) {
    await close().catch(() => {}); // the start-up error says more
    throw e;
  }
  return { path: kvPath, instances, clock, deps, kv: deps.kv, [Symbol.asyncDispose]: close };
}

/**
 * Runs `held` on `inst` with its commit under `prefix` held just before the store, runs
 * `meanwhile` (typically another process's write) to its end, then releases the commit and
 * returns what `held` answered.
 */
export async function whileHeld<T>(
  inst: Instance,
  prefix: string[],
  held: () => Promise<T>,
  meanwhile: () => Promise<unknown>,
): Promise<T> {
  const hold = await inst.hold(prefix);
  const answer = held();
  let reached = false;
  await Promise.race([
    hold.reached.then(() => void (reached = true)),
    answer.then(async (got) => {
      if (reached) return;
      const what = got instanceof Response ? `${got.status} ${await got.text()}` : String(got);
      throw new Error(
        `${inst.name} answered before any commit under ${JSON.stringify(prefix)}: ${what}`,
      );
    }),
  ]);
  await meanwhile();
  await hold.release();
  return await answer;
}
