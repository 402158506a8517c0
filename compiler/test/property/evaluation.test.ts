/**
 * Property: lowering and constant folding preserve meaning. For generated valid policies, the emitted IR
 * (evaluated by the runtime's `preparePolicy`) decides every signal set exactly as an independent reference
 * interpreter over the AST does.
 *
 * The reference implements the documented semantics directly (runtime/src/ir/types.ts, docs/language.md
 * "Evaluation"): rules in order, first match wins, a rule fires only when its condition is exactly true;
 * Kleene three-valued logic where an absent optional signal is unknown and every operator but `present`,
 * `and` and `or` propagates unknown; `false and unknown` is false and `true or unknown` is true; arithmetic
 * that is not finite is unknown; timestamps compare as instants via Date.parse (a value Date.parse cannot
 * read is unknown); `len` counts code points; `matches` is `new RegExp(pattern, "u").test`.
 *
 * Signal sets are generated per declared type and bounds, around the literals the policy mentions, sometimes
 * omitting optional signals, and each set is first checked against the bundle's own signals schema.
 *
 * The same signal sets also check that the analyze phase is sound, as it promises: a rule it calls never true
 * (W605) is never true, one it calls always true (W604) always is, and a rule it calls shadowed by another
 * (W603) never matches without that other rule matching too.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compile, type Diagnostic } from "@writ/compiler";
import { createSignalValidator, isFunctionName, preparePolicy, type Decision, type PolicyIr } from "@writ/runtime";
import type { Expr, ListItem, PolicyAst, ScalarValue, SignalDecl } from "../../src/syntax/ast.js";
import { policyModel } from "../support/generate-policy.js";
import { ODD_TIMESTAMPS, signalsArb } from "../support/generate-signals.js";

const SEED =
  process.env["WRIT_FUZZ_SEED"] === "random" ? Math.floor(Math.random() * 2 ** 31) : Number(process.env["WRIT_FUZZ_SEED"] ?? 20_260_402);
const POLICIES = 600;
const SIGNAL_SETS = 25;

// ---------------------------------------------------------------------------------------------------------
// Reference interpreter over the AST

const UNKNOWN = Symbol("unknown");
type Value = ScalarValue | typeof UNKNOWN;
type Signals = Record<string, unknown>;

class Reference {
  private readonly signals = new Map<string, SignalDecl>();
  private readonly consts = new Map<string, PolicyAst["consts"][number]>();

  constructor(private readonly ast: PolicyAst) {
    for (const s of ast.signals) this.signals.set(s.name.name, s);
    for (const c of ast.consts) this.consts.set(c.name.name, c);
  }

  decide(input: Signals): Decision {
    for (const rule of this.ast.rules) {
      if (this.eval(rule.when, input) === true) {
        return { decided: true, verdict: rule.verdict, ruleId: rule.name.name, reason: rule.reason.value };
      }
    }
    const o = this.ast.otherwise;
    return o ? { decided: true, verdict: o.verdict, ruleId: "otherwise", reason: o.reason.value } : { decided: false };
  }

  private present(name: string, input: Signals): boolean {
    return Object.prototype.hasOwnProperty.call(input, name) && input[name] !== undefined;
  }

  private isTimestamp(e: Expr): boolean {
    return e.kind === "ref" && this.signals.get(e.name)?.type.kind === "timestamp";
  }

  private item(i: ListItem): ScalarValue {
    if (i.kind === "scalar") return i.value;
    const c = this.consts.get(i.name);
    if (c?.value.kind !== "scalar") throw new Error(`list item ${i.name} is not a scalar constant`);
    return c.value.value;
  }

  private instant(v: ScalarValue): number | typeof UNKNOWN {
    if (typeof v !== "string") throw new Error("timestamp comparison of a non-string");
    const ms = Date.parse(v);
    return Number.isNaN(ms) ? UNKNOWN : ms;
  }

  eval(e: Expr, input: Signals): Value {
    switch (e.kind) {
      case "literal":
        return e.value;
      case "ref": {
        if (this.signals.has(e.name)) return this.present(e.name, input) ? (input[e.name] as ScalarValue) : UNKNOWN;
        const c = this.consts.get(e.name);
        if (c?.value.kind !== "scalar") throw new Error(`\`${e.name}\` used as a value`);
        return c.value.value;
      }
      case "call":
        return this.call(e, input);
      case "unary": {
        const v = this.eval(e.arg, input);
        if (e.op === "not") return v === UNKNOWN ? UNKNOWN : !v;
        return typeof v === "number" ? -v : UNKNOWN;
      }
      case "logical": {
        let unknown = false;
        for (const a of e.args) {
          const v = this.eval(a, input);
          if (v === (e.op === "or")) return e.op === "or";
          if (v === UNKNOWN) unknown = true;
        }
        return unknown ? UNKNOWN : e.op === "and";
      }
      case "binary":
        return this.binary(e, input);
      case "in": {
        const v = this.eval(e.value, input);
        if (v === UNKNOWN) return UNKNOWN;
        let items: ScalarValue[];
        if (e.set.kind === "list") items = e.set.items.map((i) => this.item(i));
        else {
          const c = e.set.kind === "ref" ? this.consts.get(e.set.name) : undefined;
          if (c?.value.kind !== "list") throw new Error("`in` of a non-list");
          items = c.value.items.map((i) => this.item(i));
        }
        let found: boolean;
        if (this.isTimestamp(e.value)) {
          const t = this.instant(v);
          if (t === UNKNOWN) return UNKNOWN;
          found = items.some((i) => this.instant(i) === t);
        } else found = items.some((i) => i === v);
        return e.negated ? !found : found;
      }
      case "range": {
        const v = this.eval(e.value, input);
        const lo = this.eval(e.min, input);
        const hi = this.eval(e.max, input);
        if (typeof v !== "number" || typeof lo !== "number" || typeof hi !== "number") return UNKNOWN;
        const inside = v >= lo && v <= hi;
        return e.negated ? !inside : inside;
      }
      case "matches": {
        const v = this.eval(e.value, input);
        return typeof v === "string" ? new RegExp(e.regex.pattern, "u").test(v) : UNKNOWN;
      }
    }
  }

  private call(e: Extract<Expr, { kind: "call" }>, input: Signals): Value {
    const fn = e.fn.name;
    const arg = e.args[0]!;
    if (!isFunctionName(fn)) throw new Error(`call of unknown function ${fn}`);
    switch (fn) {
      case "present":
        if (arg.kind !== "ref") throw new Error("present of a non-name");
        return this.present(arg.name, input);
      case "len": {
        const v = this.eval(arg, input);
        return typeof v === "string" ? [...v].length : UNKNOWN;
      }
    }
  }

  private binary(e: Extract<Expr, { kind: "binary" }>, input: Signals): Value {
    let l = this.eval(e.left, input);
    let r = this.eval(e.right, input);
    if (l === UNKNOWN || r === UNKNOWN) return UNKNOWN;
    switch (e.op) {
      case "starts_with":
      case "ends_with":
      case "contains":
        if (typeof l !== "string" || typeof r !== "string") return UNKNOWN;
        return e.op === "starts_with" ? l.startsWith(r) : e.op === "ends_with" ? l.endsWith(r) : l.includes(r);
      case "add":
      case "sub":
      case "mul":
      case "div": {
        if (typeof l !== "number" || typeof r !== "number") return UNKNOWN;
        const v = e.op === "add" ? l + r : e.op === "sub" ? l - r : e.op === "mul" ? l * r : l / r;
        return Number.isFinite(v) ? v : UNKNOWN;
      }
    }
    if (this.isTimestamp(e.left) || this.isTimestamp(e.right)) {
      l = this.instant(l);
      r = this.instant(r);
      if (l === UNKNOWN || r === UNKNOWN) return UNKNOWN;
    }
    switch (e.op) {
      case "eq":
        return l === r;
      case "ne":
        return l !== r;
      case "lt":
        return l < r;
      case "le":
        return l <= r;
      case "gt":
        return l > r;
      case "ge":
        return l >= r;
    }
  }
}

/** The analyzer's claims about rules, read from its warnings. */
interface Claims {
  readonly neverTrue: Expr[];
  readonly alwaysTrue: Expr[];
  readonly shadowed: { readonly rule: Expr; readonly by: Expr; readonly names: string }[];
}

function claimsOf(ast: PolicyAst, warnings: readonly Diagnostic[]): Claims {
  const claims: Claims = { neverTrue: [], alwaysTrue: [], shadowed: [] };
  const same = (a: Diagnostic["span"], b: Diagnostic["span"]) => a.start.offset === b.start.offset && a.end.offset === b.end.offset;
  for (const w of warnings) {
    if (w.code === "W605" || w.code === "W604") {
      const rule = ast.rules.find((r) => same(r.when.span, w.span));
      if (!rule) throw new Error(`${w.code} does not point at a rule condition: ${w.message}`);
      (w.code === "W605" ? claims.neverTrue : claims.alwaysTrue).push(rule.when);
    } else if (w.code === "W603") {
      const rule = ast.rules.find((r) => same(r.name.span, w.span));
      const byName = /rule `([^`]+)` matches first/.exec(w.message)?.[1];
      const by = ast.rules.find((r) => r.name.name === byName);
      if (!rule || !by) throw new Error(`cannot read W603: ${w.message}`);
      claims.shadowed.push({ rule: rule.when, by: by.when, names: `${rule.name.name} by ${by.name.name}` });
    }
  }
  return claims;
}

// ---------------------------------------------------------------------------------------------------------

describe(`evaluation agrees with a reference interpreter (seed ${SEED})`, () => {
  it(`${POLICIES} policies × ${SIGNAL_SETS} signal sets: IR decisions equal the reference's`, () => {
    let evaluations = 0;
    let decidedByRule = 0;
    let undecided = 0;
    let unknownSeen = 0;
    let claimsChecked = 0;
    fc.assert(
      fc.property(policyModel({ rules: { min: 1, max: 10 } }), fc.gen(), (model, g) => {
        const result = compile("eval.writ", model.source);
        if (!result.valid || !result.ast || !result.ir || !result.bundle) {
          throw new Error(`generated policy is invalid: ${result.errors.map((e) => `${e.code} ${e.message}`).join("; ")}`);
        }
        const ast = result.ast;
        const bundleFile = (name: string) => new TextDecoder().decode(result.bundle!.files.get(name)!);
        const schema = JSON.parse(bundleFile("signals.schema.json")) as object;
        const validate = createSignalValidator(schema);
        const fromIr = preparePolicy(result.ir);
        const fromBundle = preparePolicy(JSON.parse(bundleFile("policy.ir.json")) as PolicyIr);
        const reference = new Reference(ast);
        const arb = signalsArb(ast);
        const claims = claimsOf(ast, result.warnings);

        for (let i = 0; i < SIGNAL_SETS; i++) {
          const signals = g(() => arb);
          const validation = validate(signals);
          if (!validation.valid) {
            const odd = Object.values(signals).some((v) => ODD_TIMESTAMPS.includes(v as string));
            if (odd) continue; // a runtime may refuse instants Date.parse cannot read; nothing to evaluate then
            throw new Error(`generated signals fail the bundle's schema: ${JSON.stringify(validation.errors)}\n${JSON.stringify(signals)}`);
          }
          const expected = reference.decide(signals);
          const actual = fromIr.evaluate(signals);
          evaluations++;
          if (expected.decided && expected.ruleId !== "otherwise") decidedByRule++;
          if (!expected.decided) undecided++;
          if (ast.rules.some((r) => reference.eval(r.when, signals) === UNKNOWN)) unknownSeen++;
          expect(actual, `signals ${JSON.stringify(signals)}`).toEqual(expected);
          expect(fromBundle.evaluate(signals)).toEqual(expected);

          for (const e of claims.neverTrue) expect(reference.eval(e, signals), "W605 claimed never true").not.toBe(true);
          for (const e of claims.alwaysTrue) expect(reference.eval(e, signals), "W604 claimed always true").toBe(true);
          for (const { rule, by, names } of claims.shadowed) {
            if (reference.eval(rule, signals) === true) expect(reference.eval(by, signals), `W603 claimed ${names} shadowed`).toBe(true);
          }
          claimsChecked += claims.neverTrue.length + claims.alwaysTrue.length + claims.shadowed.length;
        }
      }),
      { seed: SEED, numRuns: POLICIES, endOnFailure: true },
    );
    console.info(
      `evaluation: ${evaluations} evaluations over ${POLICIES} policies; ${decidedByRule} decided by a rule, ${undecided} undecided, ${unknownSeen} with an unknown condition; ${claimsChecked} analyzer claims checked`,
    );
    expect(evaluations).toBeGreaterThanOrEqual(500 * 20);
    // The generated signal sets must exercise the interesting paths, not only the catch-all.
    expect(decidedByRule).toBeGreaterThan(evaluations / 10);
    expect(unknownSeen).toBeGreaterThan(evaluations / 20);
  });
});
