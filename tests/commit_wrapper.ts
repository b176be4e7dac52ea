/** A KV handle whose atomic commits go through a wrapper (to time, slow or hold them). */

type CommitResult = Deno.KvCommitResult | Deno.KvCommitError;

/** `raw`, except that every atomic's `commit` runs inside `wrap`. Everything else is `raw`'s own. */
export function wrapCommits(
  raw: Deno.Kv,
  wrap: (commit: () => Promise<CommitResult>) => Promise<CommitResult>,
): Deno.Kv {
  return new Proxy(raw, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => wrap(commit);
          return op;
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/**
 * Holds one chosen commit: `wrap` is a `wrapKv` option; after `holdCommit(n)` the n-th
 * commit from then on waits until `release()`, and `reached` resolves when it starts.
 */
export function commitGate() {
  let commits = 0;
  let holdAt = Infinity;
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  let reach!: () => void;
  const reached = new Promise<void>((r) => reach = r);
  return {
    wrap: (raw: Deno.Kv) =>
      wrapCommits(raw, async (commit) => {
        if (++commits === holdAt) {
          reach();
          await held;
        }
        return await commit();
      }),
    holdCommit: (n: number) => holdAt = commits + n,
    reached,
    release,
  };
}
