/**
 * A KV handle for tests that records what is written: the first key part of every mutation of
 * each committed atomic (one list per commit), and of each plain `set`, `delete` or `enqueue`
 * (a list of its own).
 */
export function recordingKv(raw: Deno.Kv) {
  const commits: string[][] = [];
  const atomic = (op: Deno.AtomicOperation): Deno.AtomicOperation => {
    const staged: string[] = [];
    const proxy: Deno.AtomicOperation = new Proxy(op, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (typeof v !== "function") return v;
        return (...args: unknown[]) => {
          if (prop === "mutate") {
            for (const m of args as Deno.KvMutation[]) staged.push(String(m.key[0]));
          } else if (["set", "delete", "sum", "min", "max"].includes(String(prop))) {
            staged.push(String((args[0] as Deno.KvKey)[0]));
          } else if (prop === "enqueue") staged.push("(queue)");
          if (prop === "commit") {
            return (v.apply(target, args) as Promise<Deno.KvCommitResult>).then((res) => {
              if (res.ok) commits.push(staged);
              return res;
            });
          }
          v.apply(target, args);
          return proxy;
        };
      },
    });
    return proxy;
  };
  const kv = new Proxy(raw, {
    get(target, prop) {
      if (prop === "atomic") return () => atomic(target.atomic());
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      if (prop === "set" || prop === "delete" || prop === "enqueue") {
        return (...args: unknown[]) => {
          commits.push([prop === "enqueue" ? "(queue)" : String((args[0] as Deno.KvKey)[0])]);
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return v.bind(target);
    },
  });
  /** The commits recorded since the last call, each its list of written key parts. */
  const take = () => commits.splice(0);
  /** The key parts written since the last call, all commits together. */
  const writes = () => take().flat();
  return { kv, take, writes };
}
