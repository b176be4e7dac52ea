/**
 * The index of agent names by skeleton (`agent_names_by_skeleton/<version>/<skeleton>`): each
 * registration writes its entry in the registration commit; this builds it, at start-up, for
 * the agents registered before the index (or before the current skeleton version) and
 * removes the entries of older versions. Streamed in bounded batches; idempotent, so
 * instances starting together do the same work harmlessly.
 */
import type { Deps } from "../deps.ts";
import { keys } from "../../kv/keys.ts";
import { listTyped } from "../../kv/read_many.ts";
import { transact } from "../../kv/tx.ts";
import { nameSkeleton, SKELETON_VERSION } from "./name_skeleton.ts";

/** The meta entry holding the skeleton version the index was last completed for. */
const INDEXED = keys.metaNameIndexVersion();
/** Mutations per commit while building (well under the 1,000 a commit may hold). */
const BATCH = 200;

/** Builds the index for the current skeleton version unless it is already complete. */
export async function indexAgentNameSkeletons(deps: Deps): Promise<number> {
  const done = await deps.kv.get(INDEXED);
  if (done.value === SKELETON_VERSION) return 0;
  let written = 0;
  let staged: Deno.KvMutation[] = [];
  // Through `transact`: retried while another instance starting together holds the store.
  const flush = async () => {
    const batch = staged;
    staged = [];
    if (batch.length === 0) return;
    await transact(deps.kv, (tx) => {
      for (const m of batch) m.type === "set" ? tx.set(m.key, m.value) : tx.delete(m.key);
      return Promise.resolve();
    });
  };
  // Entries of other versions go; one per agent name is written for this version.
  for await (const e of deps.kv.list({ prefix: keys.agentNamesBySkeleton.range() })) {
    if (e.key[1] === SKELETON_VERSION) continue;
    staged.push({ type: "delete", key: e.key });
    if (staged.length >= BATCH) await flush();
  }
  for await (const e of listTyped(deps.kv, { prefix: keys.agentIdByName.range() })) {
    const name = String(e.key[e.key.length - 1]);
    const key = keys.agentNamesBySkeleton(SKELETON_VERSION, nameSkeleton(name));
    staged.push({ type: "set", key, value: name });
    written++;
    if (staged.length >= BATCH) await flush();
  }
  await flush();
  await transact(deps.kv, async (tx) => {
    if ((await tx.get(INDEXED)).value !== SKELETON_VERSION) {
      tx.set(INDEXED, SKELETON_VERSION);
    }
  });
  return written;
}
