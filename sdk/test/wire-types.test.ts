/**
 * The wire types (@writ/wire) against the runtime that produces what goes on the wire. Of @writ/wire the runtime
 * imports only the fixed strings (`@writ/wire/constants`, which loads no TypeBox), so it keeps its own declarations of
 * the attestation, the signed evidence and the answers it builds; these checks run when the suite is typechecked
 * (`tsc`) and fail as soon as either side changes without the other. Where a value travels both ways (an attestation
 * is answered, then sent back to `/verify` or `/confirm-execution` and handed to the runtime's verifiers) the two types
 * must be equal; where the runtime only produces it, its type must fit the wire's. The fixed strings are declared once,
 * in @writ/wire's constants: nothing compares two copies of them, only that the runtime uses the wire's.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import * as Runtime from "@writ/runtime";
import * as Wire from "@writ/wire";
import type * as Sdk from "@writ/sdk";
import type * as Sidecar from "@writ/sidecar";

describe("the runtime's types are the wire's", () => {
  it("attestations, both ways: answered, stored, sent back and verified", () => {
    expectTypeOf<Runtime.AttestationV1>().toEqualTypeOf<Wire.AttestationV1>();
    expectTypeOf<Runtime.SignedCheckpoint>().toEqualTypeOf<Wire.SignedCheckpoint>();
    expectTypeOf<Runtime.InclusionProofJson>().toEqualTypeOf<Wire.InclusionProofJson>();
    expectTypeOf<Runtime.ConsistencyProofJson>().toEqualTypeOf<Wire.ConsistencyProofJson>();
    expectTypeOf<Runtime.LogEntry>().toEqualTypeOf<Wire.LogEntry>();
    expectTypeOf<Runtime.LogEntryKind>().toEqualTypeOf<Wire.LogEntryKind>();
    expectTypeOf<Runtime.AttestationV2>().toEqualTypeOf<Wire.AttestationV2>();
    expectTypeOf<Runtime.Attestation>().toEqualTypeOf<Wire.Attestation>();
    expectTypeOf<Runtime.Outcome>().toEqualTypeOf<Wire.Outcome>();
    expectTypeOf<Runtime.DecisionStatus>().toEqualTypeOf<Wire.DecisionStatus>();
    expectTypeOf<Runtime.ExecutionState>().toEqualTypeOf<Wire.ExecutionState>();
    expectTypeOf<Runtime.Verdict>().toEqualTypeOf<Wire.Verdict>();
  });

  it("the other signed objects, both ways: the SDK verifies them offline with the runtime", () => {
    expectTypeOf<Runtime.OverrideRecord>().toEqualTypeOf<Wire.OverrideRecord>();
    expectTypeOf<Runtime.ExecutionProof>().toEqualTypeOf<Wire.ExecutionProof>();
    expectTypeOf<Runtime.ExecutedAction>().toEqualTypeOf<Wire.ExecutedAction>();
    expectTypeOf<Runtime.MatchDetails>().toEqualTypeOf<Wire.MatchDetails>();
    expectTypeOf<Runtime.RuntimeManifest>().toEqualTypeOf<Wire.SignedRuntimeManifest>();
  });

  it("the Surface A answers the runtime builds (the sidecar and the embedded authorizer send them as they are)", () => {
    expectTypeOf<Runtime.Evaluated<Runtime.AttestationV1>>().toExtend<Wire.EvaluateResponse>();
    expectTypeOf<Runtime.Evaluated<Runtime.AttestationV1>>().toEqualTypeOf<Runtime.Evaluated<Wire.AttestationV1>>();
    // The legacy status is mapped by the sidecar (a rejection answers `completed`); the attestation is sent as is.
    expectTypeOf<Runtime.Evaluated<Runtime.AttestationV2>["attestation"]>().toEqualTypeOf<Wire.ExecuteResponse["attestation"]>();
    expectTypeOf<Runtime.DryRun>().toEqualTypeOf<Wire.DryRunResponse>();
    expectTypeOf<Runtime.Explanation>().toEqualTypeOf<Wire.Explanation>();
    expectTypeOf<Runtime.Simulation>().toEqualTypeOf<Wire.SimulateResponse>();
    expectTypeOf<Runtime.EndpointVerification>().toEqualTypeOf<Wire.VerifyResponse>();
    expectTypeOf<Runtime.CheckResult>().toEqualTypeOf<Wire.CheckResult>();
    expectTypeOf<Runtime.OverrideOutcome>().toEqualTypeOf<Wire.OverrideResponse>();
    expectTypeOf<Runtime.ConfirmationAnswer>().toEqualTypeOf<Wire.ConfirmExecutionResponse>();
  });

  it("the request bodies the runtime takes as they arrive", () => {
    expectTypeOf<Wire.OverrideRequest>().toEqualTypeOf<Runtime.OverrideRequest>();
    expectTypeOf<Wire.ExecutedActionInput>().toEqualTypeOf<Runtime.ExecutedActionRequest>();
  });

  it("the error bodies of the runtime's error table", () => {
    expectTypeOf<Runtime.ErrorBody>().toEqualTypeOf<Wire.ErrorBody>();
    expectTypeOf<Runtime.SignalError>().toEqualTypeOf<Wire.SignalErrorDetail>();
    expectTypeOf<Runtime.SignalValidationBody>().toEqualTypeOf<Wire.SignalValidationErrorBody>();
    expectTypeOf<Runtime.RateLimitedBody>().toEqualTypeOf<Wire.RateLimitedErrorBody>();
    expectTypeOf<Runtime.ErrorAnswer["body"]>().toExtend<Wire.ErrorBody>();
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
