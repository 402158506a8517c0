/**
 * Property: the explanation (the runtime's `explain`, behind `writ eval --explain` and the dry run's `?explain=true`)
 * cannot disagree with the evaluator. For generated valid policies and signal sets, its decision is what
 * `preparePolicy(ir).evaluate` decides, and each rule's result is what the evaluator makes of that rule's condition
 * alone: `true` exactly when the condition fires, `false` exactly when its negation fires, `fault` exactly when it
 * faults, `unknown` otherwise.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compile } from "@writ/compiler";
import {
  MAX_DECISION_INSTANT,
  MIN_DECISION_INSTANT,
  createSignalValidator,
  explain,
  preparePolicy,
  type IrExpr,
  type PolicyIr,
  type PreparedPolicy,
} from "@writ/runtime";
import { policyModel } from "../support/generate-policy.js";
import { ODD_TIMESTAMPS, signalsArb } from "../support/generate-signals.js";

const SEED = Number(process.env["WRIT_FUZZ_SEED"] ?? 20_261_117);
const POLICIES = 300;
const SIGNAL_SETS = 20;

/** The policy with one rule, `when`, and no catch-all: it decides exactly when `when` is true. */
function only(ir: PolicyIr, when: IrExpr): PreparedPolicy {
  return preparePolicy({ ...ir, rules: [{ id: "only", verdict: "approve", reason: "fires", when }], otherwise: null });
}

describe(`the explanation decides as the evaluator does (seed ${SEED})`, () => {
  it(`${POLICIES} policies × ${SIGNAL_SETS} signal sets: same decision, and every rule's result is its condition's`, () => {
    const seen = { true: 0, false: 0, unknown: 0, fault: 0, decisions: 0 };
    fc.assert(
      fc.property(policyModel({ rules: { min: 1, max: 10 }, remainderAndBounds: true, now: true }), fc.gen(), (model, g) => {
        const result = compile("explain.writ", model.source);
        if (!result.valid || !result.ir || !result.ast || !result.bundle)
          throw new Error(`generated policy is invalid: ${result.errors[0]?.message}`);
        const ir = result.ir;
        const schema = JSON.parse(new TextDecoder().decode(result.bundle.files.get("signals.schema.json")!)) as object;
        const validate = createSignalValidator(schema);
        const policy = preparePolicy(ir);
        const rules = ir.rules.map((r) => ({ fires: only(ir, r.when), negationFires: only(ir, { op: "not", arg: r.when }) }));
        const arb = signalsArb(result.ast);
        for (let i = 0; i < SIGNAL_SETS; i++) {
          const signals = g(() => arb);
          if (!validate(signals).valid) {
            if (Object.values(signals).some((v) => ODD_TIMESTAMPS.includes(v as string))) continue;
            throw new Error(`generated signals fail the schema: ${JSON.stringify(signals)}`);
          }
          // A decision instant from the years a clock shows, as the evaluator is given it.
          const at = new Date(g(() => fc.integer({ min: MIN_DECISION_INSTANT, max: MAX_DECISION_INSTANT })));
          const { decision, explanation } = explain(ir, signals, at);
          const context = `signals ${JSON.stringify(signals)} at ${at.toISOString()}`;
          expect(decision, context).toEqual(policy.evaluate(signals, at));
          seen.decisions++;
          expect(explanation.rules.map((r) => r.rule)).toEqual(ir.rules.map((r) => r.id));
          explanation.rules.forEach((r, k) => {
            const fired = rules[k]!.fires.evaluate(signals, at);
            const expected = fired.decided
              ? "true"
              : fired.fault
                ? "fault"
                : rules[k]!.negationFires.evaluate(signals, at).decided
                  ? "false"
                  : "unknown";
            expect(r.result, `${context}, rule ${r.rule}: ${r.condition.expr}`).toBe(expected);
            expect(r.condition.value).toBe(expected === "unknown" || expected === "fault" ? null : expected === "true");
            seen[expected]++;
          });
        }
      }),
      { seed: SEED, numRuns: POLICIES, endOnFailure: true },
    );
    console.info(
      `explain: ${seen.decisions} decisions; rule results ${seen.true} true, ${seen.false} false, ${seen.unknown} unknown, ${seen.fault} fault`,
    );
    expect(seen.decisions).toBeGreaterThan(POLICIES * SIGNAL_SETS * 0.9);
    // Every outcome must be exercised, or the property proves little.
    for (const n of [seen.true, seen.false, seen.unknown]) expect(n).toBeGreaterThan(seen.decisions / 20);
    expect(seen.fault).toBeGreaterThan(seen.decisions / 200);
  });
});
