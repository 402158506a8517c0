/**
 * Shared pieces of the durability tests: the evaluate requests they send, the answers they expect, a seeded PRNG
 * and a bounded-concurrency map.
 */
import type { HttpAnswer } from "../support/built-sidecar.js";
import { TRANSFER_SIGNALS, fixturePoliciesRoot } from "../support/policies.js";

export const API_KEY = "durability-api-key-0123456789abcdef";
export const POLICY_ID = "conformance.transfer";
export const POLICY_VERSION = "1.0.0";

/**
 * The environment of a built sidecar for these tests: Surface A alone on an ephemeral port, the tests' key, the fixture
 * policies, warnings and errors logged; `settings` adds to it or overrides it.
 */
export async function surfaceAEnv(settings: Readonly<Record<string, string>> = {}): Promise<Record<string, string>> {
  return {
    SERVICE_API_KEY: API_KEY,
    SERVICE_POLICIES_ROOT: await fixturePoliciesRoot(),
    SERVICE_PORT: "0",
    SERVICE_B_PORT: "off",
    SERVICE_LOG_LEVEL: "warn",
    ...settings,
  };
}

/**
 * SERVICE_SIGNING_THREADS of the start before `cycle` of a kill suite: the starts alternate between signing on the
 * event loop and on two threads (docs/sidecar.md, "Signing threads"), so the kills land on both paths, and each
 * restart changes path over the same data dir.
 */
export const signingThreadsAt = (cycle: number): string => (cycle % 2 === 0 ? "0" : "2");

/** The exact 422 body of a replayed executionId (spec 7, `INV-013@replay`). */
export const REPLAY_BODY = { error: "[INV-013@replay] execution already consumed: use a new executionId" } as const;

export type SignalSet = keyof typeof TRANSFER_SIGNALS;
export const SIGNAL_SETS: readonly SignalSet[] = ["approved", "pending", "rejected"];
/** The response `status` (and audit `decision`) each signal set decides. */
export const EXPECTED_STATUS: Readonly<Record<SignalSet, string>> = {
  approved: "approved",
  pending: "pending_override",
  rejected: "rejected",
};

/** The JSON text of a variant 1 `POST /evaluate` body. */
export function evaluateBody(executionId: string, signals: SignalSet): string {
  return JSON.stringify({ executionId, policyId: POLICY_ID, policyVersion: POLICY_VERSION, verifiedSignals: TRANSFER_SIGNALS[signals] });
}

export function auditPath(executionId: string): string {
  return `/audit/decisions/${encodeURIComponent(executionId)}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** mulberry32: a failing run can be replayed with its printed seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** A body as JSON, or its text when it is not JSON. */
export function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** An answer in a failure message. */
export const show = (answer: HttpAnswer): string => `${answer.status} ${answer.text.slice(0, 200)}`;
