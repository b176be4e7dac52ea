/**
 * Commit turns between processes on one store file. The embedded store lets one commit at a
 * time take its file's write lock; a commit that finds it taken by another process can fail
 * (`database is locked`) and is sent again after a pause (kv/tx.ts), so processes on one
 * file poll for the lock. Here every commit of a handle first takes an exclusive lock on a
 * file beside the store (`<store>-commits.lock`, an advisory `flock`): the kernel wakes the
 * next process the moment the holder lets go, and the store's own lock is then always free.
 *
 * A process takes the lock for a turn: every commit waiting when the turn starts goes in it
 * (the store runs them one after the other), then the lock is let go so that other processes
 * get their turn. A transaction on hot keys (a board head every post rewrites) runs whole in a
 * turn (`inTurn`, kv/tx.ts): its reads and its commit, one such transaction after the other,
 * so no other process commits between its reads and its commit and it does not run again
 * because another process changed what it read. A turn with such work holds the lock at most
 * `TURN_LIMIT_MS`: work not done by then (a stuck transaction) goes on outside the turn, its
 * commits taking later turns, so that it never stops the other processes. A process that
 * waits `LOCK_WAIT_MS` for the lock (its holder frozen: a paused container, a debugger, a
 * stopped process keeps its flock) commits without turns, meeting only the store's own lock,
 * until the lock it still asks for comes; it lets it go at once when no turn waits for it
 * then. Correctness never
 * depends on any of it: each commit is still checked by the store, and a writer that does not
 * take turns (another tool) only meets the store's lock.
 * Only for a store file: a KV Connect URL or Deno Deploy has no file lock to share.
 */

import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";

/** The turn whose work is running (a token of one turn of one handle). */
const inTurnOf = new AsyncLocalStorage<object>();

/** The longest a turn holds the lock file (ms); far longer than a turn takes. */
export const TURN_LIMIT_MS = 1000;

/**
 * The longest a turn waits for the lock file (ms) before it goes without it: twice as long
 * as a working holder keeps it.
 */
export const LOCK_WAIT_MS = 2 * TURN_LIMIT_MS;

/** The property of a handle with commit turns that runs work in a turn (`inTurn`). */
const IN_TURN = Symbol("in turn");

/** Runs `work` in this process's next turn, after the earlier work of the same `name` in it. */
type InTurn = <T>(name: string, work: () => Promise<T>) => Promise<T>;

/**
 * The handle's way to run a whole transaction attempt in a turn, or undefined for a handle
 * without commit turns. For a transaction on hot keys: no other process commits between its
 * reads and its commit, so it never runs again because another process changed what it read.
 */
export function inTurn(kv: Deno.Kv): InTurn | undefined {
  return (kv as unknown as Record<symbol, InTurn | undefined>)[IN_TURN];
}

/** The lock file beside a store file. */
export function commitLockPath(storePath: string): string {
  return `${storePath}-commits.lock`;
}

/** Commits that take their turn through one open lock file. */
class CommitTurns {
  #file: Deno.FsFile;
  /** What waits for the next turn: each start, and whether it is work on hot keys. */
  #waiting: { start: () => Promise<void>; work: boolean }[] = [];
  #running: Promise<void> | null = null;
  /** Within a turn, the work of each name, run one after the other. */
  #chains = new Map<string, Promise<unknown>>();
  /** The request for the lock still out (true once held for a turn waiting on it). */
  #asked: Promise<boolean> | null = null;
  /** Whether a turn waits for `#asked` now (else a lock that comes is let go at once). */
  #awaited = false;

  constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  /**
   * Commits that joined the turn in progress (see `run`), while what it began with runs; null
   * when no turn can be joined (none runs, or one of commits only).
   */
  #joined: Promise<unknown>[] | null = null;
  /** The token of the turn in progress, which its work runs with (`inTurnOf`). */
  #current: object | null = null;

  /** True when called from the work of this handle's turn in progress (the lock is held). */
  #fromThisTurn(): boolean {
    return this.#current !== null && inTurnOf.getStore() === this.#current;
  }

  /**
   * Runs `commit` in this process's next turn, or at once: from the work of the turn in
   * progress, and while a turn of this process runs work on hot keys, which may take a while
   * (the lock is held already; the turn lets it go once these commits are done too).
   */
  run<T>(commit: () => Promise<T>): Promise<T> {
    if (this.#fromThisTurn()) return commit();
    if (this.#joined) {
      const now = commit();
      this.#joined.push(now.catch(() => {}));
      return now;
    }
    return this.#next(commit, false);
  }

  /**
   * Runs `work` (reads and commits) in this process's next turn, after the work of the same
   * name in it; see `inTurn`. Work started by the work of a turn runs in that turn.
   */
  work<T>(name: string, work: () => Promise<T>): Promise<T> {
    const start = () => {
      const turn = this.#current!;
      const after = this.#chains.get(name) ?? Promise.resolve();
      const mine = after.then(() => inTurnOf.run(turn, work));
      this.#chains.set(name, mine.catch(() => {}));
      return mine;
    };
    return this.#fromThisTurn() ? start() : this.#next(start, true);
  }

  /** Runs `start` in this process's next turn. */
  #next<T>(start: () => Promise<T>, work: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // It runs in its caller's context (its request's meter and trace), not the turn's.
      const run = AsyncResource.bind(async () => {
        try {
          resolve(await start());
        } catch (e) {
          reject(e);
        }
      });
      this.#waiting.push({ start: run, work });
      if (this.#running === null) this.#running = this.#turns();
    });
  }

  /**
   * Turns until nothing waits: the lock, every commit and work waiting (and the commits that
   * join meanwhile), the lock let go. Work started later (a transaction on hot keys) waits for
   * the next turn, so a turn ends and other processes get theirs. It stops in the same step
   * that finds nothing waiting, so a commit added later starts the next run.
   */
  async #turns(): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        // A lock that cannot be taken (the file gone, the holder frozen) leaves the store's
        // own lock to decide.
        const locked = await this.#acquire();
        const turn = this.#waiting.splice(0);
        const joined: Promise<unknown>[] = [];
        const work = turn.some((t) => t.work);
        if (work) this.#joined = joined;
        this.#current = {};
        const done = Promise.all(turn.map((t) => t.start())).then(() => {
          this.#joined = null;
          return Promise.all(joined);
        });
        let timer: ReturnType<typeof setTimeout> | undefined;
        try {
          // Only work on hot keys can take a while; a turn of commits alone waits for them.
          await (work
            ? Promise.race([done, new Promise((r) => timer = setTimeout(r, TURN_LIMIT_MS))])
            : done);
        } finally {
          clearTimeout(timer);
          this.#joined = null;
          this.#current = null;
          this.#chains.clear();
          // Letting go never blocks: done at once, no operation left in flight, so a handle
          // closed just after its last commit closes the lock file in the same step.
          if (locked) this.#unlock();
        }
      }
    } finally {
      this.#running = null;
    }
  }

  /**
   * Takes the lock for a turn: true once held, false after `LOCK_WAIT_MS` (at once while an
   * earlier request is still out: its holder is stuck) or when the file cannot be locked.
   */
  async #acquire(): Promise<boolean> {
    const waitMs = this.#asked ? 0 : LOCK_WAIT_MS;
    this.#asked ??= this.#file.lock(true).then(() => {
      if (this.#awaited) return true;
      // It came after its turn gave up waiting: let go now, the next turn asks again.
      this.#asked = null;
      this.#unlock();
      return false;
    }, () => {
      this.#asked = null;
      return false;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    this.#awaited = true;
    const late = new Promise<"late">((resolve) =>
      timer = setTimeout(() => {
        this.#awaited = false;
        resolve("late");
      }, waitMs)
    );
    const got = await Promise.race([this.#asked, late]);
    clearTimeout(timer);
    this.#awaited = false;
    if (got === "late") return false;
    this.#asked = null;
    return got;
  }

  #unlock(): void {
    try {
      this.#file.unlockSync();
    } catch {
      // the file is gone: nothing is held
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
      if (prop === IN_TURN) return turns.work.bind(turns);
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
