/**
 * The decision vectors (conformance/vectors/decisions.json, made by compiler/scripts/decision-vectors.ts from issue
 * 39's cases, with their HTTP cases in conformance/cases/surface-a/exact-decisions.json): the committed files are what
 * the script writes now; each vector, decided by the runtime from the file's
 * own IR and schema, gets its expected outcome; and `writ eval` of each case's source answers it too, in text and JSON.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  PatternRefusedError,
  createSignalValidator,
  parseDecisionInstant,
  parseStrictJson,
  preparePolicy,
  type PolicyIr,
} from "@writ/runtime";
import { CASES, fixtureSource } from "../scripts/decision-cases.js";
import { CASES_FILE, DECISIONS_FILE, decisionCases, decisionVectors } from "../scripts/decision-vectors.js";
import { scratchCli } from "./support/cli-run.js";

interface Vector {
  readonly id: string;
  readonly policyId: string;
  readonly signals: string;
  /** The decision instant, for a policy that reads `now`. */
  readonly now?: string;
  readonly expected: Record<string, unknown> & { readonly outcome: "decided" | "invalid" | "fault" };
}
interface Bundle {
  readonly "policy.ir.json": PolicyIr;
  readonly "signals.schema.json": object;
}
interface Vectors {
  readonly policies: Record<string, Bundle>;
  readonly vectors: readonly Vector[];
  readonly refusals: readonly { readonly id: string; readonly bundle: Bundle; readonly expected: { readonly construct: string } }[];
}

const committed = readFileSync(DECISIONS_FILE, "utf8");
const file = JSON.parse(committed) as Vectors;

describe("decision vectors", () => {
  it("the committed files are what the script writes (run `npx tsx compiler/scripts/decision-vectors.ts` after a change)", () => {
    expect(committed).toBe(decisionVectors());
    expect(readFileSync(CASES_FILE, "utf8")).toBe(decisionCases());
  });

  it.each(file.vectors.map((v) => [v.id, v] as const))("%s: decided from the file's bundle as expected", (_id, v) => {
    const policy = file.policies[v.policyId]!;
    const signals = parseStrictJson(v.signals);
    const validation = createSignalValidator(policy["signals.schema.json"])(signals);
    if (v.expected.outcome === "invalid") {
      expect(validation.valid ? [] : [...new Set(validation.errors.map((e) => e.code))].sort()).toEqual(v.expected["codes"]);
      return;
    }
    expect(validation.valid).toBe(true);
    const now = v.now === undefined ? undefined : parseDecisionInstant(v.now)!;
    const d = preparePolicy(policy["policy.ir.json"]).evaluate(signals as Record<string, unknown>, now);
    if (v.expected.outcome === "decided")
      expect(d).toMatchObject({ decided: true, verdict: v.expected["verdict"], ruleId: v.expected["ruleMatched"] });
    else expect(d).toMatchObject({ decided: false, fault: { code: v.expected["code"], ruleId: v.expected["rule"] } });
  });
});

describe("refused bundles", () => {
  it.each(file.refusals.map((r) => [r.id, r] as const))("%s: the runtime refuses to prepare it, naming the construct", (_id, r) => {
    const prepare = () => {
      preparePolicy(r.bundle["policy.ir.json"]);
      createSignalValidator(r.bundle["signals.schema.json"]);
    };
    expect(prepare).toThrow(PatternRefusedError);
    expect(prepare).toThrow(r.expected.construct);
  });
});

describe("writ eval decides each case of issue 39 as its vector says", () => {
  const cli = scratchCli();

  it.each(CASES.map((c) => [c.id, c] as const))("%s", async (_id, c) => {
    writeFileSync(join(cli.cwd, "policy.writ"), fixtureSource(c.policy));
    writeFileSync(join(cli.cwd, "signals.json"), c.signals);
    const at = c.now === undefined ? [] : ["--now", c.now];
    const code = await cli.run("eval", "policy.writ", "--signals", "signals.json", ...at, "--format", "json");
    const answer = JSON.parse(cli.out.at(-1)!) as Record<string, unknown>;
    const expected = c.expected;
    switch (expected.outcome) {
      case "invalid":
        expect(code).toBe(1);
        expect([...new Set((answer["errors"] as { code: string }[]).map((e) => e.code))].sort()).toEqual(expected.codes);
        break;
      case "decided":
        expect(code).toBe(0);
        expect(answer["decision"]).toMatchObject({ verdict: expected.verdict, ruleMatched: expected.ruleMatched });
        if (c.now !== undefined) expect(answer["now"]).toBe(new Date(c.now).toISOString());
        break;
      case "fault":
        expect(code).toBe(0);
        expect(answer["decision"]).toBeNull();
        expect(answer["fault"]).toMatchObject({ code: expected.code, ruleId: expected.rule });
        cli.out.length = 0;
        expect(await cli.run("eval", "policy.writ", "--signals", "signals.json", ...at, "--explain")).toBe(0);
        expect(cli.out).toContain(
          `         nothing is decided; a sidecar answers 422 [${expected.code}@${expected.rule}] and consumes nothing`,
        );
        expect(cli.out.some((l) => l.startsWith(`  ${expected.rule}: fault  <- ends the evaluation`))).toBe(true);
        break;
    }
  });
});
