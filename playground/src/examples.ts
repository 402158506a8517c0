import { parseTestFile } from "@writ/compiler";
import exportPolicy from "../../policies/customer-data.export/1.0.0/policy.writ";
import exportTests from "../../policies/customer-data.export/1.0.0/policy.test.json";
import deployPolicy from "../../policies/deploy.production/1.0.0/policy.writ";
import deployTests from "../../policies/deploy.production/1.0.0/policy.test.json";
import paymentsPolicy from "../../policies/payments.transfer/1.2.0/policy.writ";
import paymentsTests from "../../policies/payments.transfer/1.2.0/policy.test.json";

/** A case of the policy's own tests: a named signal set, and what the policy should answer. */
export interface ExampleCase {
  readonly name: string;
  /** The signals as the editor shows them: one member per line. */
  readonly signals: string;
  /** `approve`, `reject`, `escalate`, `undecided`, or `invalid` for signals the schema refuses. */
  readonly expected: string;
}

export interface Example {
  readonly id: string;
  readonly policy: string;
  readonly cases: readonly ExampleCase[];
}

/** The shipped policies (policies/), each with the cases of its policy.test.json, read when the playground is built. */
export const EXAMPLES: readonly Example[] = [
  example("payments.transfer@1.2.0", paymentsPolicy, paymentsTests),
  example("customer-data.export@1.0.0", exportPolicy, exportTests),
  example("deploy.production@1.0.0", deployPolicy, deployTests),
];

function example(id: string, policy: string, tests: unknown): Example {
  const cases = parseTestFile(JSON.stringify(tests)).cases.map((c) => ({
    name: c.name,
    signals: signalsText(c.signals),
    expected: "invalid" in c.expect ? "invalid" : c.expect.verdict,
  }));
  return { id, policy, cases };
}

export function signalsText(signals: Readonly<Record<string, unknown>>): string {
  return `${JSON.stringify(signals, null, 2)}\n`;
}
