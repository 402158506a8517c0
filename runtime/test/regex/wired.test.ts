/**
 * `matches` and the signals schema's `pattern` both run on the linear-time engine: a pattern that V8 takes minutes on
 * for 40 characters decides 100,000 at once, and one the engine refuses is refused when the policy or the schema is
 * prepared, never when a request arrives.
 */
import { describe, expect, it } from "vitest";
import { createSignalValidator, PatternRefusedError, preparePolicy, type IrExpr, type PolicyIr } from "../../src/index.js";

const HOSTILE = `${"a".repeat(100_000)}!`;

function prepared(pattern: string) {
  const when: IrExpr = { op: "matches", value: { op: "signal", name: "s" }, pattern };
  const ir: PolicyIr = {
    irVersion: 1,
    policyId: "t",
    version: "1.0.0",
    governs: { action: "a", binding: [] },
    signals: { s: { type: "string", optional: false } },
    rules: [{ id: "r", verdict: "reject", reason: "matched", when }],
    otherwise: { verdict: "approve", reason: "no match" },
  };
  return preparePolicy(ir);
}

const schema = (pattern: string) => ({
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: { s: { type: "string", pattern } },
  additionalProperties: false,
});

describe("matches", () => {
  it("decides a nested quantifier on a hostile string in linear time", () => {
    const policy = prepared("^(a+)+$");
    expect(policy.evaluate({ s: HOSTILE })).toMatchObject({ ruleId: "otherwise" });
    expect(policy.evaluate({ s: "aaa" })).toMatchObject({ ruleId: "r" });
  });

  it("refuses, when the IR is prepared, a pattern the engine cannot run in linear time", () => {
    expect(() => prepared("^(a)\\1$")).toThrow(PatternRefusedError);
  });
});

describe("the signals schema's pattern", () => {
  it("decides a nested quantifier on a hostile string in linear time (VAL-012)", () => {
    const validate = createSignalValidator(schema("^(a+)+$"));
    expect(validate({ s: HOSTILE })).toEqual({
      valid: false,
      errors: [{ code: "VAL-012", signal: "s", message: "signal `s` does not match the declared pattern" }],
    });
    expect(validate({ s: "aaa" })).toEqual({ valid: true });
  });

  it("refuses, when the schema is compiled, a pattern the engine cannot run in linear time", () => {
    expect(() => createSignalValidator(schema("(?<=ab)c"))).toThrow(PatternRefusedError);
  });
});
