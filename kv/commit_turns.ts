/**
 * Commit turns between processes on one store file. The embedded store lets one commit at a
 * time take its file's write lock; a commit that finds it taken by another process fails at
 * once (`database is locked`) and is sent again after a pause (kv/tx.ts), so processes on one
 * file poll for the lock. Here every commit of a handle first takes an exclusive lock on a
 * file beside the store (`<store>-commits.lock`, an advisory `flock`): the kernel wakes the
 * next process the moment the holder lets go, and the store's own lock is then always free.
 *
 * A process takes the lock for a turn: every commit waiting when the turn starts goes in it
 * (the store runs them one after the other), then the lock is let go so that other processes
 * get their turn. A transaction on hot keys commits `outsideTurns` (kv/tx.ts). Correctness
 * never depends on any of it: each commit is still checked by the store, and a writer that
 * does not take turns (another tool) only meets the store's lock.
 * Only for a store file: a KV Connect URL or Deno Deploy has no file lock to share.
 */

import { AsyncLocalStorage } from "node:async_hooks";

const outside = new AsyncLocalStorage<true>();

/**
 * Runs `fn`, whose commits go straight to the store instead of waiting for a turn. For a
 * transaction on hot keys (kv/tx.ts): waiting for a turn between its reads and its commit
 * would give other processes the time to change what it read.
 */
export function outsideTurns<T>(fn: () => Promise<T>): Promise<T> {
  return outside.run(true, fn);
}

/** The lock file beside a store file. */
export function commitLockPath(storePath: string): string {
  return `${storePath}-commits.lock`;
}

/** Commits that take their turn through one open lock file. */
class CommitTurns {
  #file: Deno.FsFile;
  #waiting: (() => Promise<void>)[] = [];
  #running: Promise<void> | null = null;

  constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  /** Runs `commit` in this process's next turn (at once when `outsideTurns`). */
  run<T>(commit: () => Promise<T>): Promise<T> {
    if (outside.getStore()) return commit();
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push(async () => {
        try {
          resolve(await commit());
        } catch (e) {
          reject(e);
        }
      });
      if (this.#running === null) this.#running = this.#turns();
    });
  }

  /**
   * Turns until nothing waits: the lock, every commit waiting, the lock let go. It stops in
   * the same step that finds nothing waiting, so a commit added later starts the next run.
   */
  async #turns(): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        // A lock that cannot be taken (the file gone) leaves the store's own lock to decide.
        const locked = await this.#file.lock(true).then(() => true, () => false);
        const turn = this.#waiting.splice(0);
        try {
          await Promise.all(turn.map((start) => start()));
        } finally {
          if (locked) await this.#file.unlock().catch(() => {});
        }
      }
    } finally {
      this.#running = null;
    }
  }

  /** Closes the lock file: now, or once the commits in flight are done. */
  close(): void {
    if (this.#running) this.#running.finally(() => this.#file.close());
    else this.#file.close();
  }
}

/**
 * `kv` (a handle on the store file `storePath`), except that its atomic commits take turns
 * with the other processes' (see above). Closing it closes the lock file too. When the lock
 * file cannot be opened, `kv` as it is.
 */
export async function withCommitTurns(kv: Deno.Kv, storePath: string): Promise<Deno.Kv> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(commitLockPath(storePath), { read: true, write: true, create: true });
  } catch {
    return kv; // no lock file (a read-only folder): the store's own lock alone orders commits
  }
  const turns = new CommitTurns(file);
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => turns.run(commit);
          return op;
        };
      }
      if (prop === "close" || prop === Symbol.dispose) {
        return () => {
          target.close();
          turns.close();
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}
