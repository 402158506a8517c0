/**
 * Which process keeps a data dir's record log (record-log-storage.ts, ONE OWNER and SHARED): the one holding the data
 * dir's lock. Of a sidecar of several processes, one that does not hold it takes it once it is free (its holder ended),
 * and asks the holder for a checkpoint through the store: a request in `audit-log-meta`, which the holder's next round
 * answers (the checkpointer's `checkpointWanted`).
 */
import { randomUUID } from "node:crypto";
import { environmentDir, holdDataDir, type DataDirHold } from "./data-dir-lock.js";
import type { LogDatabases } from "./record-log-databases.js";

/** The key of the latest checkpoint request: a random id, answered once the holder has seen it. */
const CHECKPOINT_WANTED = "checkpoint-wanted";

export class LogOwnership {
  readonly #dbs: LogDatabases;
  /** For a process of a sidecar of several, its supervisor (open-marks.ts `groupOf`); null: one process, which holds the lock from its open or fails to open. */
  readonly #group: string | null;
  #hold: DataDirHold | null;
  #released = false;
  /** The latest checkpoint request answered here. */
  #answered: unknown = undefined;

  /** Tries the lock at once (held: `holds`). */
  constructor(dbs: LogDatabases, group: string | null) {
    this.#dbs = dbs;
    this.#group = group;
    this.#hold = holdDataDir(environmentDir(dbs.root));
  }

  /** Whether this process holds the lock now, without trying to take it. */
  get holds(): boolean {
    return this.#hold !== null;
  }

  /** Whether several processes of one sidecar share the data dir (a process of one holds the lock or never opened). */
  get shared(): boolean {
    return this.#group !== null;
  }

  /**
   * Whether this process keeps the log now: it holds the lock, or, sharing the data dir, takes it now that it is free;
   * then reads afresh, so what the last holder committed is in what it reads next.
   */
  owns(): boolean {
    if (this.#hold !== null) return true;
    if (this.#group === null || this.#released) return false;
    this.#hold = holdDataDir(environmentDir(this.#dbs.root));
    if (this.#hold === null) return false;
    this.#dbs.root.resetReadTxn();
    return true;
  }

  /** For the holder: whether a process sharing the data dir asked for a checkpoint since this one last looked. */
  checkpointWanted(): boolean {
    if (this.#group === null || this.#hold === null) return false;
    const wanted = this.#dbs.meta.get(CHECKPOINT_WANTED);
    if (wanted === undefined || wanted === this.#answered) return false;
    this.#answered = wanted;
    return true;
  }

  /** For a process that does not hold the lock: asks its holder for a checkpoint (committed when this resolves). */
  async askCheckpoint(): Promise<void> {
    await this.#dbs.meta.put(CHECKPOINT_WANTED, randomUUID());
  }

  /** Lets go of the lock, for good (the log is closing). */
  release(): void {
    this.#released = true;
    this.#hold?.release();
    this.#hold = null;
  }
}
