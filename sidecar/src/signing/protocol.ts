/**
 * The messages between the signing pool (pool.ts) and its threads (worker.ts). Inputs and results travel as
 * transferred buffers: one copy into the batch's buffer, none across the threads.
 */

export const SIGNATURE_BYTES = 64;
/** A request's answer: one verdict byte (1: self-verification passed), then its signature. */
export const RESULT_BYTES = 1 + SIGNATURE_BYTES;
/** libsodium's secret key is the 32-byte RFC 8032 seed followed by the public key. */
export const PUBLIC_KEY_OFFSET = 32;

/** A signing key as a thread holds it: libsodium's 64-byte secret key, under the pool's slot number. */
export interface ThreadKey {
  readonly kind: "key";
  readonly slot: number;
  readonly secret: Uint8Array;
}

export interface Batch {
  readonly kind: "batch";
  readonly id: number;
  /** Every input, one after the other. */
  readonly inputs: ArrayBuffer;
  /** For n inputs, 2n numbers: where each input ends in `inputs`, then the key slot of each. */
  readonly index: Uint32Array;
}

export type ToSigningThread = ThreadKey | Batch;

/** A thread's first message: sodium-native loaded and its keys held. */
export const READY = "ready";

export interface BatchAnswer {
  readonly id: number;
  /** RESULT_BYTES a request, in the batch's order. */
  readonly results: ArrayBuffer;
}

/** What a thread is given at its start: every key registered so far. */
export interface ThreadData {
  readonly keys: readonly ThreadKey[];
}
