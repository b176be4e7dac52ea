/** Shard 3 of the in-process test set (see set.ts). */
import { loadShard } from "./set.ts";

await loadShard(3);
