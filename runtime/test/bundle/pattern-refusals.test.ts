/**
 * A bundle made by hand, or by a compiler from before E310, cannot bring in a pattern the linear-time engine refuses:
 * loading it fails (BUNDLE_INVALID, the pattern and the construct named) whether the pattern is a `matches` of the IR
 * or a `pattern` of the signals schema, and the authorizer answers as for any bundle that does not load.
 */
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { BundleError, loadBundle, type PolicyIr } from "../../src/index.js";
import { TRANSFER_IR, TRANSFER_SCHEMA, writeTransferBundle } from "../support/bundle.js";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

async function refusal(by: { ir?: PolicyIr; schema?: object }): Promise<BundleError> {
  const root = writeTransferBundle(by);
  roots.push(root);
  const e = await loadBundle(root, TRANSFER_IR.policyId, TRANSFER_IR.version).then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(BundleError);
  return e as BundleError;
}

/** The transfer policy with its first rule testing `country` against `pattern`. */
function withMatches(pattern: string): PolicyIr {
  const [first, ...rest] = TRANSFER_IR.rules;
  return { ...TRANSFER_IR, rules: [{ ...first!, when: { op: "matches", value: { op: "signal", name: "country" }, pattern } }, ...rest] };
}

function withSchemaPattern(pattern: string): object {
  return { ...TRANSFER_SCHEMA, properties: { ...TRANSFER_SCHEMA.properties, country: { type: "string", pattern } } };
}

describe("a bundle with a pattern the linear-time engine refuses", () => {
  it("is refused for a backreference in policy.ir.json's matches", async () => {
    expect(await refusal({ ir: withMatches("^([A-Z])\\1$") })).toMatchObject({
      code: "BUNDLE_INVALID",
      message:
        "bundle cannot be prepared: backreference `\\1` cannot be matched in linear time: repeat the group's pattern instead (pattern `/^([A-Z])\\1$/`)",
    });
  });

  it("is refused for a backreference in signals.schema.json's pattern", async () => {
    const e = await refusal({ schema: withSchemaPattern("^(?<c>[A-Z])\\k<c>$") });
    expect(e.code).toBe("BUNDLE_INVALID");
    expect(e.message).toBe(
      "bundle cannot be prepared: backreference `\\k<c>` cannot be matched in linear time: repeat the group's pattern instead (pattern `/^(?<c>[A-Z])\\k<c>$/`)",
    );
  });

  it("is refused for a lookahead of more than one character, in either file", async () => {
    expect((await refusal({ ir: withMatches("^(?=.*\\d)") })).message).toContain("lookahead `(?=.*\\d)` cannot be matched in linear time");
    expect((await refusal({ schema: withSchemaPattern("(?<!ab)c") })).message).toContain("lookbehind `(?<!ab)`");
  });

  it("loads when the same places hold patterns the engine runs", async () => {
    const root = writeTransferBundle({ ir: withMatches("^(?<![a-z])[A-Z]{2}(?!\\d)$"), schema: withSchemaPattern("^\\p{Lu}{2}$") });
    roots.push(root);
    const loaded = await loadBundle(root, TRANSFER_IR.policyId, TRANSFER_IR.version);
    expect(loaded.validateSignals({ amount: 1, currency: "USD", country: "KP" })).toEqual({ valid: true });
    expect(loaded.validateSignals({ amount: 1, currency: "USD", country: "kp" })).toMatchObject({ valid: false });
    expect(loaded.policy.evaluate({ amount: 1, currency: "USD", country: "KP" })).toMatchObject({ ruleId: "sanctioned" });
  });
});
