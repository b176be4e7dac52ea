/**
 * Crash harness: the real server (main.ts) under a steady write load — posts, replies,
 * root deletes — killed with SIGKILL at random moments, restarted on the same KV file,
 * and checked after every restart by crash_verify.ts (docs/reliability.md).
 */
import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import { registerAt, type ServerProcess, startServer } from "../e2e/server_process.ts";
import { verifyAfterRestart } from "./crash_verify.ts";

/** A write the server acknowledged (201), or that a lookup found after a crash. */
export interface Landed {
  kind: "root" | "reply";
  id: string;
  seq: number;
  rootId: string;
  agent: number;
  idem: string;
}

/** A write whose answer never came (the server died): resolved by lookup after restart. */
export interface Pending {
  kind: "root" | "reply";
  agent: number;
  idem: string;
  rootId: string | null;
}

/** Figures of a run, for docs/reliability.md. */
export interface CrashFigures {
  kills: number;
  restarts: number;
  requests: number;
  acknowledged: number;
  noAnswer: number;
  foundAfterCrash: number;
  provedAbsent: number;
  deletes: number;
  deletesUnanswered: number;
  /** Kills that left a root's purge unfinished (resumed at the next start). */
  purgesInterrupted: number;
  recordsVerified: number;
  httpReads: number;
  maxSeq: number;
  seconds: number;
}

export const AGENT_HEADERS = { accept: "application/json", "x-agent-protocol": "board/1" };
const ENV = { BOARD_LIMIT_SCALE: "1000" };

const rand = (n: number) => Math.floor(Math.random() * n);
const idem = () => `crash-${crypto.randomUUID().replaceAll("-", "")}`;

/** The state of one crash run: what landed, what is pending, what was deleted. */
export class CrashRun {
  readonly kvPath: string;
  readonly fig: CrashFigures = {
    kills: 0,
    restarts: 0,
    requests: 0,
    acknowledged: 0,
    noAnswer: 0,
    foundAfterCrash: 0,
    provedAbsent: 0,
    deletes: 0,
    deletesUnanswered: 0,
    purgesInterrupted: 0,
    recordsVerified: 0,
    httpReads: 0,
    maxSeq: 0,
    seconds: 0,
  };
  readonly agents: { id: string; key: string }[] = [];
  /** Landed writes by id. */
  readonly landed = new Map<string, Landed>();
  /** seq -> id over the whole run: a seq is never handed out twice. */
  readonly seqOwner = new Map<number, string>();
  pending: Pending[] = [];
  /** Roots whose DELETE answered 200 (or proved done after a crash). */
  readonly deleted = new Set<string>();
  /** Roots whose DELETE got no answer (resolved after the restart). */
  readonly maybeDeleted = new Set<string>();
  readonly #deleting = new Set<string>();
  readonly #replies = new Map<string, number>();

  constructor(dir: string) {
    this.kvPath = `${dir}/board.kv`;
  }

  /** Headers of writer `a`. */
  auth(a: number): Record<string, string> {
    return { ...AGENT_HEADERS, authorization: `Bearer ${this.agents[a].key}` };
  }

  /** Records a landed write; a seq given to two ids fails the run. */
  record(l: Landed): void {
    const owner = this.seqOwner.get(l.seq);
    assert.ok(owner === undefined || owner === l.id, `seq ${l.seq} given to ${owner} and ${l.id}`);
    this.seqOwner.set(l.seq, l.id);
    this.landed.set(l.id, l);
    if (l.kind === "reply") this.#replies.set(l.rootId, (this.#replies.get(l.rootId) ?? 0) + 1);
    this.fig.maxSeq = Math.max(this.fig.maxSeq, l.seq);
  }

  /** Runs `kills` rounds of load + SIGKILL + restart + checks; returns the figures. */
  async run(kills: number, writers = 4): Promise<CrashFigures> {
    const t0 = performance.now();
    let server = await startServer(this.kvPath, ENV);
    try {
      for (let i = 0; i < writers; i++) {
        this.agents.push(await registerAt(server.url, `crash-writer-${i}`));
      }
      for (let round = 0; round <= kills; round++) {
        await verifyAfterRestart(this, server, round);
        if (round === kills) break;
        await this.#load(server, round);
        this.fig.kills++;
        server = await startServer(this.kvPath, ENV);
        this.fig.restarts++;
      }
      await server.stop();
    } finally {
      await server.stop("SIGKILL");
    }
    this.fig.seconds = Math.round((performance.now() - t0) / 100) / 10;
    return this.fig;
  }

  #liveRoots(): Landed[] {
    return [...this.landed.values()].filter((l) =>
      l.kind === "root" && !this.deleted.has(l.id) && !this.maybeDeleted.has(l.id)
    );
  }

  /** One round of load from every writer, ended by a SIGKILL at a random moment. */
  async #load(s: ServerProcess, round: number): Promise<void> {
    let stopped = false;
    let failure: unknown = null;
    const floor = this.fig.maxSeq;
    const loop = async (a: number) => {
      let n = 0;
      while (!stopped) {
        const roots = this.#liveRoots();
        const r = Math.random();
        if (r < 0.35 || roots.length < 3) {
          const payload = { title: `r${round} w${a} #${n++}`, body: `root ${crypto.randomUUID()}` };
          await this.#write(s, a, "root", null, payload, floor);
        } else if (r < 0.93) {
          // Replies cluster on a few hot threads, so deletes purge many replies.
          const hot = roots.slice(-4);
          const root = hot[rand(hot.length)];
          await this.#write(s, a, "reply", root.id, { body: `reply ${n++} of w${a}` }, floor);
        } else {
          const own = roots.filter((l) => l.agent === a && !this.#deleting.has(l.id));
          if (own.length === 0) continue;
          // The thread with the most replies: its purge takes longest, so kills land in it.
          const count = (l: Landed) => this.#replies.get(l.id) ?? 0;
          await this.#remove(s, a, own.reduce((x, y) => (count(y) > count(x) ? y : x)).id);
        }
      }
    };
    const loops = this.agents.map((_, a) =>
      loop(a).catch((e) => {
        failure ??= e;
        stopped = true;
      })
    );
    await new Promise((r) => setTimeout(r, 150 + rand(850)));
    stopped = true;
    await s.stop("SIGKILL");
    await Promise.all(loops);
    if (failure) throw failure;
    const kv = await Deno.openKv(this.kvPath);
    try {
      for await (const _ of kv.list({ prefix: keys.purges.range() })) this.fig.purgesInterrupted++;
    } finally {
      kv.close();
    }
  }

  async #write(
    s: ServerProcess,
    a: number,
    kind: "root" | "reply",
    rootId: string | null,
    payload: Record<string, unknown>,
    floor: number,
  ): Promise<void> {
    const key = idem();
    const path = kind === "root" ? "/v1/posts" : `/v1/posts/${rootId}/replies`;
    this.fig.requests++;
    let res: Response;
    let body;
    try {
      res = await fetch(`${s.url}${path}`, {
        method: "POST",
        headers: { ...this.auth(a), "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(payload),
      });
      body = await res.json();
    } catch {
      this.fig.noAnswer++;
      this.pending.push({ kind, agent: a, idem: key, rootId });
      return;
    }
    if (res.status === 404 && kind === "reply") {
      // Its thread is being deleted by its owner at this moment.
      assert.ok(this.#deleting.has(rootId!), `reply to live thread ${rootId} was 404`);
      return;
    }
    assert.equal(res.status, 201, `${path}: ${JSON.stringify(body)}`);
    assert.ok(body.seq > floor, `seq ${body.seq} after a restart must exceed ${floor}`);
    this.fig.acknowledged++;
    this.record({
      kind,
      id: body.id,
      seq: body.seq,
      rootId: rootId ?? body.id,
      agent: a,
      idem: key,
    });
  }

  async #remove(s: ServerProcess, a: number, rootId: string): Promise<void> {
    this.fig.requests++;
    this.fig.deletes++;
    this.#deleting.add(rootId);
    let res: Response;
    let body;
    try {
      res = await fetch(`${s.url}/v1/posts/${rootId}`, { method: "DELETE", headers: this.auth(a) });
      body = await res.json();
    } catch {
      this.fig.deletesUnanswered++;
      this.maybeDeleted.add(rootId);
      return;
    }
    assert.equal(res.status, 200, JSON.stringify(body));
    this.deleted.add(rootId);
  }
}
