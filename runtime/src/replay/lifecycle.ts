/**
 * The replay lifecycle as pure decisions: given the entry currently stored under a fingerprint (or none), what the
 * operation answers and what, if anything, replaces the entry. Every store runs these functions inside its one atomic
 * step (the memory store synchronously, the LMDB store inside one write transaction), so stores cannot drift apart,
 * and an engine without JavaScript (a Redis script, a SQL statement) has one readable reference to follow.
 *
 * The conventions every store shares (docs/replay.md, "Lifecycle"): a `reserved` or `failed` entry is expired when
 * `now >= expiresAt` and then counts as absent, until `expire`/`sweep` removes it (`read` has no clock); `executing`,
 * `consumed`, `pending_override` and `rejected` never expire, so an execution whose outcome is unknown stays blocked,
 * failing closed; token-gated operations check `not_found`, then `token_mismatch`, then `wrong_state`, and a refusal
 * carries the stored entry; `context` is stored as JSON; returned entries are deeply frozen.
 */
import type { ReplayEntry, ReplayResult, ReplayState } from "./store.js";
import { FAILED_TTL_MS, RESERVATION_TTL_MS } from "./store.js";

/** Longest fingerprint accepted, in UTF-8 bytes (LMDB keys are limited to 1,978 bytes; SHA-256 hex is 64). */
export const MAX_FINGERPRINT_BYTES = 512;

export interface Transition {
  readonly result: ReplayResult;
  /** The entry to store under the fingerprint when the operation succeeded. */
  readonly next?: ReplayEntry;
}

export function isExpired(entry: ReplayEntry, now: number): boolean {
  return (entry.state === "reserved" || entry.state === "failed") && entry.expiresAt !== null && now >= entry.expiresAt;
}

export function checkFingerprint(fingerprint: unknown): string {
  if (typeof fingerprint !== "string" || fingerprint.length === 0) {
    throw new TypeError("fingerprint must be a non-empty string");
  }
  if (Buffer.byteLength(fingerprint, "utf8") > MAX_FINGERPRINT_BYTES) {
    throw new RangeError(`fingerprint is longer than ${MAX_FINGERPRINT_BYTES} bytes`);
  }
  return fingerprint;
}

export function checkNow(now: number | undefined): number {
  if (now === undefined) return Date.now();
  if (typeof now !== "number" || !Number.isFinite(now)) throw new TypeError("now must be a finite number of Unix milliseconds");
  return now;
}

function checkTtl(ttlMs: number | undefined, fallback: number, allowZero: boolean): number {
  if (ttlMs === undefined) return fallback;
  if (typeof ttlMs !== "number" || !Number.isFinite(ttlMs) || ttlMs < 0 || (!allowZero && ttlMs === 0)) {
    throw new RangeError(`ttlMs must be a finite number ${allowZero ? ">= 0" : "> 0"}`);
  }
  return ttlMs;
}

export const checkReserveTtl = (ttlMs: number | undefined): number => checkTtl(ttlMs, RESERVATION_TTL_MS, false);
export const checkFailedTtl = (ttlMs: number | undefined): number => checkTtl(ttlMs, FAILED_TTL_MS, true);

export function checkToken(token: unknown): string {
  if (typeof token !== "string") throw new TypeError("token must be a string");
  return token;
}

export function checkApproved(approved: unknown): boolean {
  if (typeof approved !== "boolean") throw new TypeError("approved must be a boolean");
  return approved;
}

/** `context` as the stores keep it: a JSON round trip, or absent. Throws (TypeError) for cycles and BigInt. */
export function normalizeContext(context: unknown): unknown {
  const text = JSON.stringify(context);
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** Builds a frozen entry with a fixed member order, leaving `context` and `resolution` out when undefined. */
export function makeEntry(fields: ReplayEntry): ReplayEntry {
  const { fingerprint, state, token, createdAt, updatedAt, expiresAt, context, resolution } = fields;
  const entry: ReplayEntry = {
    fingerprint,
    state,
    token,
    createdAt,
    updatedAt,
    expiresAt,
    ...(context === undefined ? {} : { context }),
    ...(resolution === undefined ? {} : { resolution }),
  };
  return deepFreeze(entry);
}

const STATES: ReadonlySet<string> = new Set<ReplayState>(["reserved", "executing", "consumed", "failed", "pending_override", "rejected"]);

/** Checks that a value read back from storage is an entry for `fingerprint`; throws on anything else. */
export function parseStoredEntry(value: unknown, fingerprint: string): ReplayEntry {
  const v = value as Partial<Record<keyof ReplayEntry, unknown>> | null;
  if (
    v === null ||
    typeof v !== "object" ||
    v.fingerprint !== fingerprint ||
    typeof v.state !== "string" ||
    !STATES.has(v.state) ||
    typeof v.token !== "string" ||
    typeof v.createdAt !== "number" ||
    typeof v.updatedAt !== "number" ||
    (v.expiresAt !== null && typeof v.expiresAt !== "number")
  ) {
    throw new Error(`replay store holds a malformed entry for \`${fingerprint}\``);
  }
  return makeEntry({
    fingerprint,
    state: v.state as ReplayState,
    token: v.token,
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
    expiresAt: v.expiresAt,
    context: v.context,
    resolution: v.resolution,
  });
}

export function decideReserve(
  fingerprint: string,
  current: ReplayEntry | undefined,
  token: string,
  ttlMs: number,
  now: number,
): Transition {
  if (current !== undefined && !isExpired(current, now)) return { result: { ok: false, reason: "conflict", entry: current } };
  const next = makeEntry({ fingerprint, state: "reserved", token, createdAt: now, updatedAt: now, expiresAt: now + ttlMs });
  return { result: { ok: true, entry: next }, next };
}

/**
 * (none) -> consumed, or -> pending_override holding `context` when one is given: a reservation and its outcome in
 * one write, for an execution whose outcome is known before anything is stored (the authorizer signs, then consumes).
 */
export function decideConsume(
  fingerprint: string,
  current: ReplayEntry | undefined,
  token: string,
  context: unknown,
  now: number,
): Transition {
  if (current !== undefined && !isExpired(current, now)) return { result: { ok: false, reason: "conflict", entry: current } };
  const state = context === undefined ? "consumed" : "pending_override";
  const next = makeEntry({
    fingerprint,
    state,
    token,
    createdAt: now,
    updatedAt: now,
    expiresAt: null,
    ...(context === undefined ? {} : { context }),
  });
  return { result: { ok: true, entry: next }, next };
}

function gated(
  current: ReplayEntry | undefined,
  token: string,
  now: number,
  from: readonly ReplayState[],
  change: (entry: ReplayEntry) => Pick<ReplayEntry, "state" | "expiresAt" | "context" | "resolution">,
): Transition {
  if (current === undefined || isExpired(current, now)) return { result: { ok: false, reason: "not_found" } };
  if (current.token !== token) return { result: { ok: false, reason: "token_mismatch", entry: current } };
  if (!from.includes(current.state)) return { result: { ok: false, reason: "wrong_state", entry: current } };
  const next = makeEntry({ ...current, updatedAt: now, ...change(current) });
  return { result: { ok: true, entry: next }, next };
}

export const decideStartExecution = (current: ReplayEntry | undefined, token: string, now: number): Transition =>
  gated(current, token, now, ["reserved"], () => ({ state: "executing", expiresAt: null }));

export const decideConfirm = (current: ReplayEntry | undefined, token: string, now: number): Transition =>
  gated(current, token, now, ["reserved", "executing"], () => ({ state: "consumed", expiresAt: null }));

export const decideFail = (current: ReplayEntry | undefined, token: string, ttlMs: number, now: number): Transition =>
  gated(current, token, now, ["reserved", "executing"], () => ({ state: "failed", expiresAt: now + ttlMs }));

/** `context` must already be normalized (see `normalizeContext`). */
export const decideMarkPendingOverride = (current: ReplayEntry | undefined, token: string, context: unknown, now: number): Transition =>
  gated(current, token, now, ["reserved", "executing"], () => ({ state: "pending_override", expiresAt: null, context }));

/** `resolution` (the override record) must already be normalized; it is kept beside the original `context`. */
export const decideResolveOverride = (
  current: ReplayEntry | undefined,
  token: string,
  approved: boolean,
  resolution: unknown,
  now: number,
): Transition =>
  gated(current, token, now, ["pending_override"], (entry) => ({
    state: approved ? "consumed" : "rejected",
    expiresAt: null,
    context: entry.context,
    resolution,
  }));
