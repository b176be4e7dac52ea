/**
 * The per-request read of a caller's agent record and the read-cache versions
 * (domain/accounts/agents.ts `findAgentByKey`), shared by the requests that arrive together.
 *
 * A request's read always starts after the request arrived: it never joins a read already
 * in flight, which could predate a write committed before the request arrived (a revoked
 * key, another instance's post). While two reads are in flight, arriving requests wait;
 * when one returns, the next starts for all of them: one `getMany` per up to nine distinct
 * accounts, with the version keys. Idle, a request reads at once; under load, requests in
 * flight share fewer KV round trips. Nothing read is kept after it is handed out.
 */
import type { ValueOf } from "../../kv/key_values.ts";
import { keys } from "../../kv/keys.ts";
import { KV_LIMITS } from "../../kv/atomic_limits.ts";
import { readNamed } from "../../kv/read_many.ts";
import { versionKeys } from "../read_cache.ts";

/** What an account's key holds (its area declares it: domain/accounts/agents.ts). */
type AgentRecord = ValueOf<ReturnType<typeof keys.agents>>;

/** An account record and the read-cache versions, from one `getMany`. */
interface AgentRead {
  record: Deno.KvEntryMaybe<AgentRecord>;
  versions: Deno.KvEntryMaybe<unknown>[];
}

interface Waiting {
  id: string;
  resolve(read: AgentRead): void;
  reject(e: unknown): void;
}

/**
 * Reads in flight at once per KV handle. With one, a request arriving during a read waits
 * for it and then for its own; two let it start at once while the next ones wait, and
 * measured faster than one, than unshared reads, and no slower than three
 * (docs/benchmark_notes.md "Reads").
 */
const MAX_IN_FLIGHT = 2;

class AgentReads {
  #waiting: Waiting[] = [];
  #inFlight = 0;
  constructor(readonly kv: Deno.Kv) {}

  read(id: string): Promise<AgentRead> {
    const read = new Promise<AgentRead>((resolve, reject) => {
      this.#waiting.push({ id, resolve, reject });
    });
    if (this.#inFlight < MAX_IN_FLIGHT) this.#round();
    return read;
  }

  /** One read for everyone waiting now; when it returns, the next for those who came since. */
  async #round(): Promise<void> {
    this.#inFlight++;
    const round = Map.groupBy(this.#waiting, (w) => w.id);
    this.#waiting = [];
    const ids = [...round.keys()];
    const per = KV_LIMITS.keysPerGetMany - versionKeys().length;
    const parts = [];
    for (let i = 0; i < ids.length; i += per) {
      parts.push(this.#readPart(ids.slice(i, i + per), round));
    }
    await Promise.all(parts);
    this.#inFlight--;
    if (this.#waiting.length) this.#round();
  }

  /** One `getMany` for the accounts `ids`, handed to their waiters (or its failure). */
  async #readPart(ids: string[], round: Map<string, Waiting[]>): Promise<void> {
    try {
      const { versions, records } = await readNamed(this.kv, {
        versions: versionKeys(),
        records: ids.map((id) => keys.agents(id)),
      });
      ids.forEach((id, i) => {
        for (const w of round.get(id)!) w.resolve({ record: records[i], versions });
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
