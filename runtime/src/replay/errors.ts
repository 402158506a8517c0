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

/**
 * A store could not carry out a write or make it durable (the disk is full, a commit failed, the data dir stopped
 * confirming writes). Nothing was acknowledged: the caller answers 503 and may retry; the service stays up.
 */
export class StoreUnavailableError extends Error {
  readonly code = "STORE_UNAVAILABLE" as const;
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}
