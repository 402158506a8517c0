/**
 * Errors of the replay stores. They extend `Error`, not `WritRuntimeError`: that class's `code` is a closed
 * union owned by `../errors.ts`, so these carry their own literal `code` instead. Messages follow the
 * runtime's convention: lowercase, no final period.
 */

/** The in-process store is full (spec 2.12: "has a maximum of 1,000,000 entries and throws when exceeded"). */
export class ReplayCapacityError extends Error {
  readonly code = "REPLAY_CAPACITY" as const;
  readonly capacity: number;
  constructor(capacity: number) {
    super(`replay store is full: ${capacity} entries (sweep expired entries or raise the capacity)`);
    this.name = "ReplayCapacityError";
    this.capacity = capacity;
  }
}

/** An operation on a store after `close()`. */
export class ReplayStoreClosedError extends Error {
  readonly code = "REPLAY_CLOSED" as const;
  constructor() {
    super("replay store is closed");
    this.name = "ReplayStoreClosedError";
  }
}
