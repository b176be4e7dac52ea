/**
 * The per-request read of a caller's agent record and the read-cache versions
 * (domain/accounts/agents.ts `findAgentByKey`), shared by the requests that arrive together.
 *
 * A request's read always starts after the request arrived: it never joins a read already
 * in flight, which could predate a write committed before the request arrived (a revoked
 * key, another instance's post). While one read is in flight, arriving requests wait; when
 * it returns, one `getMany` per up to nine distinct accounts (with the version keys) reads
 * for all of them. Idle, a request reads at once; under load, eight requests in flight make
 * about two KV round trips instead of eight. Nothing read is kept after it is handed out.
 */
import { keys } from "../../kv/keys.ts";
import { KV_LIMITS } from "../../kv/limits.ts";
import { versionKeys } from "../read_cache.ts";

/** An account record and the read-cache versions, from one `getMany`. */
export interface AgentRead {
  record: Deno.KvEntryMaybe<unknown>;
  versions: Deno.KvEntryMaybe<unknown>[];
}

interface Waiting {
  id: string;
  resolve(read: AgentRead): void;
  reject(e: unknown): void;
}

class AgentReads {
  #waiting: Waiting[] = [];
  #reading = false;
  constructor(readonly kv: Deno.Kv) {}

  read(id: string): Promise<AgentRead> {
    const read = new Promise<AgentRead>((resolve, reject) => {
      this.#waiting.push({ id, resolve, reject });
    });
    if (!this.#reading) this.#drain();
    return read;
  }

  /** Reads for everyone waiting, round after round, until nobody arrived meanwhile. */
  async #drain(): Promise<void> {
    this.#reading = true;
    while (this.#waiting.length) {
      const round = Map.groupBy(this.#waiting, (w) => w.id);
      this.#waiting = [];
      const ids = [...round.keys()];
      const per = KV_LIMITS.keysPerGetMany - versionKeys().length;
      const parts = [];
      for (let i = 0; i < ids.length; i += per) {
        parts.push(this.#readPart(ids.slice(i, i + per), round));
      }
      await Promise.all(parts);
    }
    this.#reading = false;
  }

  /** One `getMany` for the accounts `ids`, handed to their waiters (or its failure). */
  async #readPart(ids: string[], round: Map<string, Waiting[]>): Promise<void> {
    const versionCount = versionKeys().length;
    try {
      const entries = await this.kv.getMany<unknown[]>([
        ...versionKeys(),
        ...ids.map((id) => keys.agents(id)),
      ]);
      const versions = entries.slice(0, versionCount);
      ids.forEach((id, i) => {
        for (const w of round.get(id)!) w.resolve({ record: entries[versionCount + i], versions });
      });
    } catch (e) {
      for (const id of ids) for (const w of round.get(id)!) w.reject(e);
    }
  }
}

const readers = new WeakMap<Deno.Kv, AgentReads>();

/**
 * Reads the agent record `id` and the read-cache versions in a `getMany` that starts after
 * this call (shared with the other callers waiting for the same round).
 */
export function readAgentWithVersions(kv: Deno.Kv, id: string): Promise<AgentRead> {
  let r = readers.get(kv);
  if (!r) readers.set(kv, r = new AgentReads(kv));
  return r.read(id);
}
