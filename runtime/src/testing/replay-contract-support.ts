/**
 * What the ReplayStore contract's suites share (replay-contract.ts): the harness a store's author provides, records as
 * the authorizer hands them over, and the steps that bring a fingerprint into each state.
 */
import type { DecisionAuditRecord, OverrideAuditRecord, TransitionRecord } from "../replay/records.js";
import type { ReplayEntry, ReplayResult, ReplayState, ReplayStore } from "../replay/store.js";

export interface StoreHarness {
  readonly store: ReplayStore;
  /** Called after `store.close()`; removes whatever the factory created (e.g. a temporary directory). */
  dispose(): Promise<void>;
  /** The transition records the store has kept so far (records.ts), in any order, read back from where it keeps them. */
  records(): Promise<readonly TransitionRecord[]>;
  /**
   * The keys of the store's expiry index as stored, `[expiresAt, fingerprint]`, for a store that keeps one as data of
   * its own (LMDB); absent where the index is the engine's (PostgreSQL) or lazy, in memory. When present, the suite
   * checks it holds exactly the stored entries that expire.
   */
  expiryIndex?(): Promise<ReadonlyArray<readonly [number, string]>>;
}

/** A decision record as the authorizer hands it over; only the members a store indexes need to be real. */
export function decisionRecord(executionId: string, at = T0): TransitionRecord {
  const body = {
    executionId,
    endpoint: "evaluate",
    status: "approved",
    ruleMatched: "r1",
    attestation: { policyId: "payments", execution_fingerprint: executionId },
    recordedAt: new Date(at).toISOString(),
  };
  return { kind: "decision", body: body as unknown as DecisionAuditRecord };
}

export function overrideRecord(executionId: string, approved: boolean, by: string, at = T0): TransitionRecord {
  const body = {
    executionId,
    approved,
    approvedBy: by,
    approverRole: "ops",
    reason: "checked",
    overrideId: `o-${by}`,
    record: {},
    recordedAt: new Date(at).toISOString(),
  };
  return { kind: "override", body: body as unknown as OverrideAuditRecord };
}

export const T0 = 1_700_000_000_000;
export const YEAR = 365 * 24 * 3600 * 1000;

export function ok(result: ReplayResult): ReplayEntry {
  if (!result.ok) throw new Error(`expected ok, got ${result.reason}`);
  return result.entry;
}

/** Brings `fp` into `state` at time T0 (+1 ms per step); returns the token. */
export async function into(store: ReplayStore, fp: string, state: ReplayState): Promise<string> {
  const { token } = ok(await store.reserve(fp, { now: T0 }));
  switch (state) {
    case "reserved":
      break;
    case "executing":
      ok(await store.startExecution(fp, token, T0 + 1));
      break;
    case "consumed":
      ok(await store.startExecution(fp, token, T0 + 1));
      ok(await store.confirm(fp, token, T0 + 2));
      break;
    case "failed":
      ok(await store.startExecution(fp, token, T0 + 1));
      ok(await store.fail(fp, token, { now: T0 + 2 }));
      break;
    case "pending_override":
      ok(await store.markPendingOverride(fp, token, { why: "escalate" }, T0 + 1));
      break;
    case "rejected":
      ok(await store.markPendingOverride(fp, token, { why: "escalate" }, T0 + 1));
      ok(await store.resolveOverride(fp, token, false, { now: T0 + 2 }));
      break;
  }
  return token;
}

export const ALL_STATES: readonly ReplayState[] = ["reserved", "executing", "consumed", "failed", "pending_override", "rejected"];
export const FINAL_OR_BLOCKING: readonly ReplayState[] = ["executing", "consumed", "pending_override", "rejected"];

export type Op = "startExecution" | "confirm" | "fail" | "markPendingOverride" | "resolveOverride";
export const OPS: readonly Op[] = ["startExecution", "confirm", "fail", "markPendingOverride", "resolveOverride"];
export const ALLOWED_FROM: Record<Op, readonly ReplayState[]> = {
  startExecution: ["reserved"],
  confirm: ["reserved", "executing"],
  fail: ["reserved", "executing"],
  markPendingOverride: ["reserved", "executing"],
  resolveOverride: ["pending_override"],
};

export function run(store: ReplayStore, op: Op, fp: string, token: string, now: number): Promise<ReplayResult> {
  switch (op) {
    case "startExecution":
      return store.startExecution(fp, token, now);
    case "confirm":
      return store.confirm(fp, token, now);
    case "fail":
      return store.fail(fp, token, { now });
    case "markPendingOverride":
      return store.markPendingOverride(fp, token, { k: 1 }, now);
    case "resolveOverride":
      return store.resolveOverride(fp, token, true, { now });
  }
}
