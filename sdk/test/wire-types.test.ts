/**
 * The wire types (@writ/wire) against the runtime that produces what goes on the wire. The runtime declares none of
 * the attestation, evidence, answer and error-body types: it imports them from `@writ/wire/types` with `import type`
 * (which loads no TypeBox) and re-exports them, some under names of its own. What it still declares itself is checked
 * here, when the suite is typechecked (`tsc`): the verdicts and the explanation of its evaluator, the log entry kinds it
 * lists, a failed signal (its portable signal validator's), and the generic answer of a signed decision. The fixed strings are declared once, in @writ/wire's constants:
 * nothing compares two copies of them, only that the runtime uses the wire's.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import * as Runtime from "@writ/runtime";
import * as Wire from "@writ/wire";
import type * as Sdk from "@writ/sdk";
import type * as Sidecar from "@writ/sidecar";

describe("what the runtime declares itself is the wire's", () => {
  it("the evaluator's verdicts and explanation, and the log's entry kinds", () => {
    expectTypeOf<Runtime.Verdict>().toEqualTypeOf<Wire.Verdict>();
    expectTypeOf<Runtime.Explanation>().toEqualTypeOf<Wire.Explanation>();
    expectTypeOf<Runtime.LogEntryKind>().toEqualTypeOf<Wire.LogEntryKind>();
  });

  it("a failed signal, which the portable signal validator declares so that the compiler's types need no TypeBox", () => {
    expectTypeOf<Runtime.SignalError>().toEqualTypeOf<Wire.SignalErrorDetail>();
  });

  it("a signed decision's answer (the sidecar and the embedded authorizer send it as it is)", () => {
    expectTypeOf<Runtime.Evaluated<Runtime.AttestationV1>>().toExtend<Wire.EvaluateResponse>();
  });

  it("the fixed strings are the wire's own, and the runtime answers each of the spec's error messages under its name", () => {
    // The runtime re-exports the wire's object (one declaration), not a copy of it.
    expect(Runtime.PAYLOAD_TYPES).toBe(Wire.PAYLOAD_TYPES);
    for (const [code, message] of Object.entries(Wire.SPEC_ERRORS)) {
      expect(Runtime.isErrorCode(code) ? Runtime.ERROR_CODES[code].message : `no code ${code}`, code).toBe(message);
    }
  });
});

describe("the SDK and the sidecar use the wire's types, not declarations of their own", () => {
  it("the SDK re-exports them under their names", () => {
    expectTypeOf<Sdk.EvaluateResponse>().toEqualTypeOf<Wire.EvaluateResponse>();
    expectTypeOf<Sdk.Attestation>().toEqualTypeOf<Wire.Attestation>();
    expectTypeOf<Sdk.DecisionDetail>().toEqualTypeOf<Wire.DecisionDetail>();
    expectTypeOf<Sdk.TrustRecord>().toEqualTypeOf<Wire.TrustRecord>();
    expectTypeOf<Sdk.ErrorDetail>().toEqualTypeOf<Wire.ErrorDetail>();
    // The client's audit queries add Dates to the wire's RFC 3339 bounds.
    expectTypeOf<Wire.DecisionQuery>().toExtend<Sdk.DecisionQuery>();
    expectTypeOf<Wire.SecurityEventQuery>().toExtend<Sdk.SecurityEventQuery>();
  });

  it("the sidecar answers them", () => {
    expectTypeOf<Sidecar.DecisionDetail>().toEqualTypeOf<Wire.DecisionDetail>();
    expectTypeOf<Sidecar.SecurityEventRow>().toEqualTypeOf<Wire.SecurityEventRow>();
    expectTypeOf<Sidecar.AuditStats>().toEqualTypeOf<Wire.AuditStats>();
    expectTypeOf<Sidecar.TrustRecord>().toEqualTypeOf<Wire.TrustRecord>();
    expectTypeOf<Sidecar.ReplayResult>().toEqualTypeOf<Wire.ReplayResult>();
  });
});
