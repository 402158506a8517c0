/**
 * Writes conformance/vectors/decisions.json from decision-cases.ts: each policy compiled (its IR and signals schema are
 * what an implementation loads), each case's signals decided by this runtime, and the file written only when every
 * case decides as the case says; and the same cases as HTTP conformance cases (conformance/cases/surface-a/
 * exact-decisions.json), which `writ conformance` runs against a server. `npx tsx compiler/scripts/decision-vectors.ts`;
 * compiler/test/decision-vectors.test.ts checks the committed files are what this writes.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  BUNDLE_FILES,
  DECISION_INSTANT_FORM,
  PatternRefusedError,
  createSignalValidator,
  errorBody,
  parseDecisionInstant,
  parseStrictJson,
  preparePolicy,
  type IrExpr,
  type PolicyIr,
} from "@writ/runtime";
import { compile } from "../src/compile.js";
import { CASES, REFUSALS, fixtureSource, type DecisionCase, type ExpectedDecision } from "./decision-cases.js";

export const DECISIONS_FILE = fileURLToPath(new URL("../../conformance/vectors/decisions.json", import.meta.url));
export const CASES_FILE = fileURLToPath(new URL("../../conformance/cases/surface-a/exact-decisions.json", import.meta.url));

/**
 * The conformance cases of the decisions: each a dry run with the signals as written (`rawBody`, so a number with more
 * digits than a double holds reaches the server as such); a fault also signed, and its executionId then used again
 * for signals of the same policy that decide, since a fault consumes nothing.
 */
export function decisionCases(): string {
  // A server decides at its own clock: a vector that needs its instant has no HTTP case.
  const cases = CASES.filter((c) => c.now === undefined || c.anyInstant === true).flatMap((c) => {
    const policyId = `conformance.${c.policy}`;
    const dry = {
      id: `a.exact-decisions.${c.id}`,
      section: c.expected.outcome === "invalid" ? "3" : "2.6",
      title: c.description,
      steps: [
        {
          request: {
            method: "POST",
            path: "/evaluate",
            rawBody: `{"policyId": "${policyId}", "policyVersion": "1.0.0", "signals": ${c.signals}}`,
          },
          expect: expectation(c.expected, c.now !== undefined),
        },
      ],
    };
    const sibling = CASES.find((o) => o.policy === c.policy && o.expected.outcome === "decided");
    if (c.expected.outcome !== "fault" || sibling === undefined) return [dry];
    const signed = (signals: string) => ({
      method: "POST",
      path: "/evaluate",
      body: { executionId: "{{uuid:e}}", policyId, policyVersion: "1.0.0", verifiedSignals: parseStrictJson(signals) },
    });
    const consumed = {
      id: `a.exact-decisions.${c.id}.consumes-nothing`,
      section: "2.12",
      title: `${c.description}; signed, it consumes nothing: the executionId then decides other signals`,
      steps: [
        { request: signed(c.signals), expect: expectation(c.expected) },
        { request: signed(sibling.signals), expect: { status: 200 } },
      ],
    };
    return [dry, consumed];
  });
  const file = {
    $schema: "../case.schema.json",
    surface: "a",
    area: "exact-decisions",
    title:
      "Exact decisions: decimals, integers past 2^53, faults, lower, NFC (issue 39), % abs min max, semver, ip, durations, now (issue 41; conformance/vectors/decisions.json)",
    description:
      "Made by compiler/scripts/decision-vectors.ts from the decision vectors: the fixture policies conformance.money, cents, tenths, doubles, minor, divide, tiny, guarded, corp, payee, memo, remainder, bounds, versions, networks, durations and now must be loaded. A vector decided at an instant of its own has no case here (a server decides at its clock); those of conformance.now here decide alike at any instant from 2000 to 9998.",
    cases,
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * What the server answers: a dry run's decision, the signal validation's codes, or the fault's coded 422. `readsNow`: the
 * dry run of a policy that reads `now` says the instant it decided at.
 */
function expectation(expected: ExpectedDecision, readsNow = false): object {
  switch (expected.outcome) {
    case "decided": {
      // As the suite's other cases: `wouldDecide` any string (spec 2.6 does not fix its words), the rule exactly.
      const now = readsNow ? { now: { $type: "string" } } : {};
      return {
        status: 200,
        body: { wouldDecide: { $type: "string" }, ruleMatched: expected.ruleMatched, signalsValidated: true, ...now },
      };
    }
    case "invalid":
      return {
        status: 422,
        body: {
          error: { $oneOf: ["Signal validation failed", "Signals validation failed"] },
          details: { $each: { code: { $oneOf: expected.codes } } },
        },
      };
    case "fault":
      return { status: 422, body: { error: errorBody(expected.code, expected.rule).error } };
  }
}

interface CompiledPolicy {
  readonly source: string;
  readonly ir: PolicyIr;
  readonly schema: object;
}

/** The vectors file's content: the policies compiled, and each case with what must be answered. */
export function decisionVectors(): string {
  const policies = new Map<string, CompiledPolicy>();
  for (const name of new Set(CASES.map((c) => c.policy))) {
    const source = fixtureSource(name);
    const result = compile(`${name}.writ`, source);
    if (!result.valid || !result.bundle)
      throw new Error(`policy ${name} does not compile: ${result.errors.map((e) => e.message).join("; ")}`);
    const file = (f: string): unknown => parseStrictJson(new TextDecoder().decode(result.bundle!.files.get(f)!));
    policies.set(name, { source, ir: file(BUNDLE_FILES.ir) as PolicyIr, schema: file(BUNDLE_FILES.schema) as object });
  }
  const vectors = CASES.map((c) => {
    const policy = policies.get(c.policy)!;
    const answered = decide(policy, c);
    if (JSON.stringify(answered) !== JSON.stringify(c.expected)) {
      throw new Error(`case ${c.id}: this runtime answers ${JSON.stringify(answered)}, the case says ${JSON.stringify(c.expected)}`);
    }
    if (c.anyInstant === true) {
      for (const now of ANY_INSTANTS) {
        const at = decide(policy, { ...c, now });
        if (JSON.stringify(at) !== JSON.stringify(c.expected))
          throw new Error(`case ${c.id}: at ${now} this runtime answers ${JSON.stringify(at)}`);
      }
    }
    const error = c.expected.outcome === "fault" ? { error: errorBody(c.expected.code, c.expected.rule).error } : {};
    return {
      id: c.id,
      description: c.description,
      policyId: policy.ir.policyId,
      signals: c.signals,
      ...(c.now === undefined ? {} : { now: c.now }),
      expected: { ...c.expected, ...error },
    };
  });
  const memo = policies.get("memo")!;
  const refusals = REFUSALS.map((r) => {
    const bundle = refusedBundle(memo, r.in, r.pattern);
    const why = refusal(bundle);
    if (!why.includes(r.construct))
      throw new Error(`refusal ${r.id}: this runtime says \`${why}\`, which does not name \`${r.construct}\``);
    return { id: r.id, description: r.description, bundle, expected: { outcome: "refused", construct: r.construct } };
  });
  const document = {
    kind: "decision",
    description:
      "Decisions any implementation must make: for each vector, load the policy's policy.ir.json and signals.schema.json, parse `signals` strictly, validate, evaluate (at the vector's `now`, the decision instant the policy's `now` reads, when it has one). `decided`: the verdict and rule; `invalid`: the VAL codes (as a set); `fault`: the evaluation fault, and the 422 body's error a server answers. Each of `refusals` is a bundle no runtime may load, for a pattern no linear-time engine matches (docs/conformance.md, \"Decision vectors\").",
    policies: Object.fromEntries(
      [...policies.values()].map((p) => [p.ir.policyId, { source: p.source, [BUNDLE_FILES.ir]: p.ir, [BUNDLE_FILES.schema]: p.schema }]),
    ),
    vectors,
    refusals,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** `policy`'s IR and schema with the `matches` (`ir`) or the schema `pattern` (`schema`) replaced by `pattern`. */
function refusedBundle(policy: CompiledPolicy, where: "ir" | "schema", pattern: string): Record<string, object> {
  const swap = (e: IrExpr): IrExpr => (e.op === "matches" ? { ...e, pattern } : e);
  const ir = where === "ir" ? { ...policy.ir, rules: policy.ir.rules.map((r) => ({ ...r, when: swap(r.when) })) } : policy.ir;
  const schema = where === "schema" ? structuredClone(policy.schema) : policy.schema;
  if (where === "schema") (schema as { properties: { memo: { pattern: string } } }).properties.memo.pattern = pattern;
  return { [BUNDLE_FILES.ir]: ir, [BUNDLE_FILES.schema]: schema };
}

/** Why this runtime refuses to prepare the bundle's IR or schema; throws when it prepares both. */
export function refusal(bundle: Record<string, object>): string {
  try {
    preparePolicy(bundle[BUNDLE_FILES.ir] as PolicyIr);
    createSignalValidator(bundle[BUNDLE_FILES.schema]!);
  } catch (e) {
    if (e instanceof PatternRefusedError) return e.message;
    throw e;
  }
  throw new Error("the bundle was prepared: it should have been refused");
}

/** The instants an `anyInstant` case is checked at: the first and last a server's clock shows in its span, and one between. */
const ANY_INSTANTS = ["2000-01-01T00:00:00Z", "2026-06-01T12:00:00Z", "9998-12-31T23:59:59.999Z"];

function decide(policy: CompiledPolicy, c: DecisionCase): ExpectedDecision {
  const signals = parseStrictJson(c.signals);
  const validation = createSignalValidator(policy.schema)(signals);
  if (!validation.valid) return { outcome: "invalid", codes: [...new Set(validation.errors.map((e) => e.code))].sort() };
  const now = c.now === undefined ? undefined : parseDecisionInstant(c.now);
  if (now === null) throw new Error(`case ${c.id}: \`now\` is not ${DECISION_INSTANT_FORM}`);
  const d = preparePolicy(policy.ir).evaluate(signals as Record<string, unknown>, now);
  if (d.decided) return { outcome: "decided", verdict: d.verdict, ruleMatched: d.ruleId };
  if (d.fault) return { outcome: "fault", code: d.fault.code, rule: d.fault.ruleId };
  throw new Error(`case ${c.id} is undecided: the vectors have no undecided case`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(DECISIONS_FILE, decisionVectors());
  writeFileSync(CASES_FILE, decisionCases());
  process.stdout.write(`wrote ${DECISIONS_FILE} (${CASES.length} vectors) and ${CASES_FILE}\n`);
}
