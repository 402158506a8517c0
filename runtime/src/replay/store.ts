/**
 * Replay protection (spec 2.12; the lifecycle of a fingerprint, its states and transitions: docs/replay.md,
 * "Lifecycle"). Every operation is one atomic conditional write, so the interface can be implemented on a shared engine
 * (Redis, PostgreSQL) for a fleet of sidecars: no caller ever reads, decides and writes back across two calls.
 *
 * INVARIANT (a fingerprint is consumed once, INV-013): once `consumed`, `rejected` or `pending_override`, an
 * entry never returns to a reservable state, and `reserve` of it answers `conflict`.
 * INVARIANT (acknowledged means durable): a durable store resolves a write only after it is on disk, so a
 * caller that answers its client after the promise resolves never loses an acknowledged transition.
 */
import type { TransitionRecord } from "./records.js";

export type ReplayState = "reserved" | "executing" | "consumed" | "failed" | "pending_override" | "rejected";

export interface ReplayEntry {
  readonly fingerprint: string;
  readonly state: ReplayState;
  /** Random token handed out by `reserve`; every later transition must present it (override lineage). */
  readonly token: string;
  /** Unix milliseconds. */
  readonly createdAt: number;
  readonly updatedAt: number;
  /**
   * Unix milliseconds after which a `reserved` or `failed` entry no longer blocks; null when it never expires.
   * Boundary shared by every implementation (lifecycle.ts): expired when `now >= expiresAt`, so a TTL of N ms
   * blocks for exactly N ms; an expired entry counts as absent for every operation but `read` until expire or
   * sweep removes it.
   */
  readonly expiresAt: number | null;
  /** Opaque JSON the caller attaches (e.g. the pending decision's context for an override). */
  readonly context?: unknown;
  /** Opaque JSON stored when a pending override is resolved (the override record), beside `context`. */
  readonly resolution?: unknown;
}

/**
 * Refusals, checked in this order: `not_found` (no live entry), `token_mismatch`, `wrong_state`; `conflict` is
 * `reserve`'s only refusal. `entry` is the stored live entry, present whenever there is one (lifecycle.ts).
 */
export type ReplayResult =
  | { readonly ok: true; readonly entry: ReplayEntry }
  | { readonly ok: false; readonly reason: "conflict" | "not_found" | "token_mismatch" | "wrong_state"; readonly entry?: ReplayEntry };

export interface ReserveOptions {
  /** Default 300,000 (spec: reservation TTL 300 s). */
  readonly ttlMs?: number;
  /** For tests and for engines with their own clock; default Date.now(). */
  readonly now?: number;
}

export interface ConsumeOptions {
  /** Given: the entry becomes `pending_override` holding it (an escalation awaiting its override); else `consumed`. */
  readonly context?: unknown;
  readonly now?: number;
  /**
   * The record of this consumption (the decision, or the confirmation, with its signed attestation or proof), as data:
   * committed exactly when the consumption is, in the same transaction where the engine has one (records.ts). A store
   * that knows no layout for records (the runtime's LMDB store, without the sidecar's audit trail) keeps only the entry.
   */
  readonly record?: TransitionRecord;
}

export interface ResolveOverrideOptions {
  /** The override record, kept beside the original `context` (stored as JSON, like `context`). */
  readonly resolution?: unknown;
  readonly now?: number;
  /** The override's audit record, as data: committed exactly when the resolution is (see `ConsumeOptions.record`). */
  readonly record?: TransitionRecord;
}

export interface ReplayStore {
  /** Creates a `reserved` entry when the fingerprint is free (absent, or its reserved/failed TTL has passed). */
  reserve(fingerprint: string, options?: ReserveOptions): Promise<ReplayResult>;
  /**
   * (none) -> consumed, or -> pending_override with `options.context`: reserve and confirm in one atomic write
   * (one flush), for an outcome known before anything is stored. `conflict` while a live entry exists.
   */
  consume(fingerprint: string, options?: ConsumeOptions): Promise<ReplayResult>;
  /** reserved -> executing. */
  startExecution(fingerprint: string, token: string, now?: number): Promise<ReplayResult>;
  /** reserved | executing -> consumed. */
  confirm(fingerprint: string, token: string, now?: number): Promise<ReplayResult>;
  /** reserved | executing -> failed, blocking for `ttlMs` (default 30,000: spec failed-entry TTL 30 s). */
  fail(fingerprint: string, token: string, options?: { readonly ttlMs?: number; readonly now?: number }): Promise<ReplayResult>;
  /** reserved | executing -> pending_override, keeping `context` for the override's lineage checks. */
  markPendingOverride(fingerprint: string, token: string, context: unknown, now?: number): Promise<ReplayResult>;
  /** pending_override -> consumed (approved) or rejected; `wrong_state` when already resolved. */
  resolveOverride(fingerprint: string, token: string, approved: boolean, options?: ResolveOverrideOptions): Promise<ReplayResult>;
  /** Removes the entry if its TTL has passed; true when something was removed. */
  expire(fingerprint: string, now?: number): Promise<boolean>;
  /** Removes every expired entry; returns how many. */
  sweep(now?: number): Promise<number>;
  read(fingerprint: string): Promise<ReplayEntry | null>;
  close(): Promise<void>;
}

export const RESERVATION_TTL_MS = 300_000;
export const FAILED_TTL_MS = 30_000;

/** Whether a durable store takes writes (`store` in the sidecar's `GET /health`): any engine reports it so. */
export interface StoreHealth {
  readonly ok: boolean;
  /** Why it is not ok: the last failure's message; null when ok. */
  readonly problem: string | null;
  /** ISO 8601: since when it is failing; null when ok. */
  readonly since: string | null;
}
