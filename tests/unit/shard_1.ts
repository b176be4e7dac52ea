/** Shard 1 of the in-process test set (see set.ts). */
import { loadShard } from "./set.ts";

await loadShard(1);
