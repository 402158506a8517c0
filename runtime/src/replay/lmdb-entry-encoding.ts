/**
 * How LmdbReplayStore stores an entry (docs/replay.md, "LmdbReplayStore"): a JSON array of what the key does not
 * already say, `[state, token, createdAt]`, and `updatedAt` and `expiresAt` after those when the entry has an expiry or
 * was changed since it was made, and `{context, resolution}` after those when it holds either. The fingerprint is the
 * key. A consumed entry takes about 60 bytes where the object form (`{fingerprint, state, …}`) took about 220: the replay
 * tree holds one entry per execution ever consumed, and its size is what every new execution's random leaf is read from
 * (docs/running-for-years.md).
 *
 * Entries an earlier release stored as objects (`{fingerprint, state, token, …}`) read as they are: a value is an object
 * or an array, and each is read as what it is. Both are JSON, readable by any LMDB client.
 */
import type { ReplayEntry, ReplayState } from "./store.js";

/** States by their number in the array form; an entry's number never changes. */
const STATES: readonly ReplayState[] = ["reserved", "executing", "consumed", "failed", "pending_override", "rejected"];
const STATE_NUMBERS = new Map(STATES.map((state, i) => [state, i]));

/** The array form of `entry`, as the JSON text lmdb-js stores. */
export function encodeEntry(entry: ReplayEntry): string {
  const state = STATE_NUMBERS.get(entry.state);
  const opaque =
    entry.context === undefined && entry.resolution === undefined
      ? undefined
      : {
          ...(entry.context === undefined ? {} : { context: entry.context }),
          ...(entry.resolution === undefined ? {} : { resolution: entry.resolution }),
        };
  if (opaque !== undefined) return JSON.stringify([state, entry.token, entry.createdAt, entry.updatedAt, entry.expiresAt, opaque]);
  if (entry.expiresAt !== null || entry.updatedAt !== entry.createdAt)
    return JSON.stringify([state, entry.token, entry.createdAt, entry.updatedAt, entry.expiresAt]);
  return JSON.stringify([state, entry.token, entry.createdAt]);
}

/**
 * A stored value as the members of the entry of `fingerprint` (its key): what `parseStoredEntry` then checks. An object
 * (an earlier release's form) reads as itself, its own `fingerprint` checked against the key there; a value of any
 * other shape too, and is refused there.
 */
export function decodeEntry(value: unknown, fingerprint: string): unknown {
  if (!Array.isArray(value)) return value;
  const [state, token, createdAt, updatedAt, expiresAt, opaque] = value as unknown[];
  const held = (opaque ?? {}) as { readonly context?: unknown; readonly resolution?: unknown };
  return {
    fingerprint,
    state: typeof state === "number" ? STATES[state] : undefined,
    token,
    createdAt,
    updatedAt: value.length > 3 ? updatedAt : createdAt,
    expiresAt: value.length > 3 ? expiresAt : null,
    ...("context" in held ? { context: held.context } : {}),
    ...("resolution" in held ? { resolution: held.resolution } : {}),
  };
}

/**
 * The lmdb-js encoder of the replay database (its `encoder` option): entries written in the array form, values read
 * as the JSON they are (`decodeEntry` makes an entry of either form).
 */
export const REPLAY_ENTRY_ENCODER = {
  encode: (entry: ReplayEntry): Buffer => Buffer.from(encodeEntry(entry), "utf8"),
  decode: (bytes: Uint8Array): unknown => JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")),
  // Handed a value's own bytes: lmdb-js's shared read buffer is longer than the value.
  needsStableBuffer: true,
};
