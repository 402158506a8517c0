import type { TestReport } from "./run-tests.js";

/** One policy's part of a `writ test` run, as every output format reports it. */
export type PolicyTestOutcome = {
  /** The policy source, as the user sees its path. */
  readonly policy: string;
  readonly testFile: string;
  /** `{policyId}@{version}` once the policy compiles, else its path. */
  readonly suite: string;
} & (
  | {
      readonly status: "passed" | "failed";
      readonly report: TestReport;
      /** Rules no case reached fail the policy (`--require-coverage`). */
      readonly coverageRequired: boolean;
    }
  | {
      /** Nothing ran: the policy does not compile, or its test file is missing, malformed or names rules it lacks. */
      readonly status: "error";
      /** Which of the two is at fault. */
      readonly cause: "policy" | "test file";
      /** The file `error` is about: the policy when it does not compile or has no test file, else the test file. */
      readonly file: string;
      readonly error: string;
      readonly details: readonly string[];
    }
);

/** The run as `writ test --format json` prints it: every policy's outcome, then the totals. */
export function outcomesJson(outcomes: readonly PolicyTestOutcome[]): object {
  const policies = outcomes.map((o) => {
    const { policy, testFile, suite, status } = o;
    if (o.status === "error") return { policy, testFile, suite, status, cause: o.cause, file: o.file, error: o.error, details: o.details };
    const { cases, rules, covered, uncovered } = o.report;
    return { policy, testFile, suite, status, cases, rules, covered, uncovered };
  });
  const count = (s: PolicyTestOutcome["status"]) => outcomes.filter((o) => o.status === s).length;
  return { policies, passed: count("passed"), failed: count("failed"), errors: count("error") };
}
