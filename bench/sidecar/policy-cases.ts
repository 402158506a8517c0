/**
 * The policy both sides of the sidecar benchmark decide, and its signal sets: the test cases of the shipped
 * payments.transfer@1.2.0. Its valid cases make every rule and the `otherwise` decide (the compiler's
 * `test --require-coverage` enforces that), so cycling through them exercises the whole policy.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Verdict } from "@writ/runtime";

/** Resolved from this file, not the working directory, so the scripts run from anywhere. */
export const POLICY_DIR = fileURLToPath(new URL("../../policies/payments.transfer/1.2.0/", import.meta.url));
export const POLICY_SOURCE = `${POLICY_DIR}policy.writ`;
const POLICY_TESTS = `${POLICY_DIR}policy.test.json`;

export type Signals = Readonly<Record<string, unknown>>;

/** A signal set writ decides, with the verdict the test file expects. */
export interface ValidCase {
  readonly name: string;
  readonly signals: Signals;
  readonly verdict: Verdict;
}

/** A signal set writ refuses before deciding, with the VAL codes the test file expects. */
export interface InvalidCase {
  readonly name: string;
  readonly signals: Signals;
  readonly codes: readonly string[];
}

export interface PolicyCases {
  readonly valid: readonly ValidCase[];
  readonly invalid: readonly InvalidCase[];
}

interface RawCase {
  readonly name?: unknown;
  readonly signals?: unknown;
  readonly expect?: { readonly verdict?: unknown; readonly invalid?: unknown };
}

const VERDICTS: readonly unknown[] = ["approve", "reject", "escalate"] satisfies Verdict[];

export async function loadCases(): Promise<PolicyCases> {
  const raw = JSON.parse(await readFile(POLICY_TESTS, "utf8")) as { cases?: readonly RawCase[] };
  const valid: ValidCase[] = [];
  const invalid: InvalidCase[] = [];
  for (const [i, c] of (raw.cases ?? []).entries()) {
    const name = typeof c.name === "string" ? c.name : `case ${i}`;
    if (typeof c.signals !== "object" || c.signals === null) throw new Error(`${POLICY_TESTS}: ${name} has no signals object`);
    const signals = c.signals as Signals;
    if (Array.isArray(c.expect?.invalid)) {
      invalid.push({ name, signals, codes: c.expect.invalid.map(String) });
    } else if (VERDICTS.includes(c.expect?.verdict)) {
      valid.push({ name, signals, verdict: c.expect?.verdict as Verdict });
    } else {
      throw new Error(`${POLICY_TESTS}: ${name} expects neither a verdict nor \`invalid\``);
    }
  }
  if (valid.length === 0) throw new Error(`${POLICY_TESTS} has no valid cases`);
  return { valid, invalid };
}
