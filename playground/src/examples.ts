import { decisionInstant, lossyNumbersOf } from "@writ/runtime";
import { parseTestFile } from "@writ/compiler";
import exportPolicy from "../../policies/customer-data.export/1.0.0/policy.writ";
import exportTests from "../../policies/customer-data.export/1.0.0/policy.test.json";
import deployPolicy from "../../policies/deploy.production/1.0.0/policy.writ";
import deployTests from "../../policies/deploy.production/1.0.0/policy.test.json";
import paymentsPolicy from "../../policies/payments.transfer/1.3.0/policy.writ";
// As text: a case may send a number with more digits than a double holds, which parsed JSON would have lost.
import paymentsTests from "../../policies/payments.transfer/1.3.0/policy.test.json?raw";

/** A case of the policy's own tests: a named signal set, and what the policy should answer. */
export interface ExampleCase {
  readonly name: string;
  /** The signals as the editor shows them: one member per line. */
  readonly signals: string;
  /** `approve`, `reject`, `escalate`, `undecided`, `invalid` for signals the schema refuses, or `fault`. */
  readonly expected: string;
  /** The case's decision instant (`now`), as `issuedAt` writes it; empty for the current time. */
  readonly now: string;
}

export interface Example {
  readonly id: string;
  readonly policy: string;
  readonly cases: readonly ExampleCase[];
}

/** The shipped policies (policies/), each with the cases of its policy.test.json, read when the playground is built. */
export const EXAMPLES: readonly Example[] = [
  example("payments.transfer@1.3.0", paymentsPolicy, paymentsTests),
  example("customer-data.export@1.0.0", exportPolicy, exportTests),
  example("deploy.production@1.0.0", deployPolicy, deployTests),
];

/** `tests`: the test file, parsed by the build's JSON loader or as its text. */
function example(id: string, policy: string, tests: unknown): Example {
  const cases = parseTestFile(typeof tests === "string" ? tests : JSON.stringify(tests)).cases.map((c) => ({
    name: c.name,
    signals: signalsText(c.signals),
    expected: "invalid" in c.expect ? "invalid" : "fault" in c.expect ? "fault" : c.expect.verdict,
    now: c.now === undefined ? "" : decisionInstant(c.now),
  }));
  return { id, policy, cases };
}

/** The signals as the editor shows them, one member per line, a number a double does not carry as it was written. */
export function signalsText(signals: Readonly<Record<string, unknown>>): string {
  const lossy = lossyNumbersOf(signals);
  const members = Object.entries(signals).map(
    ([name, value]) => `  ${JSON.stringify(name)}: ${lossy?.get(name) ?? JSON.stringify(value, null, 2)}`,
  );
  return members.length === 0 ? "{}\n" : `{\n${members.join(",\n")}\n}\n`;
}
