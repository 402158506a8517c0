/**
 * The SDK declares the wire shapes the sidecar answers with (it may import no writ package but the runtime). These
 * checks run when the suite is typechecked (`tsc`): every shape the sidecar answers fits the SDK's type, and both
 * name the same members, so a change on either side fails the typecheck until the other follows.
 */
import { describe, expectTypeOf, it } from "vitest";
import type * as Sidecar from "@writ/sidecar";
import type * as Sdk from "@writ/sdk";

describe("wire types agree with the sidecar's", () => {
  it("audit records", () => {
    expectTypeOf<Sidecar.DecisionRow>().toExtend<Sdk.DecisionRow>();
    expectTypeOf<keyof Sidecar.DecisionRow>().toEqualTypeOf<keyof Sdk.DecisionRow>();
    // The sidecar keeps the override record and the proof as opaque JSON; their members are the runtime's.
    expectTypeOf<keyof Sidecar.DecisionDetail>().toEqualTypeOf<keyof Sdk.DecisionDetail>();
    expectTypeOf<keyof NonNullable<Sidecar.DecisionDetail["override"]>>().toEqualTypeOf<keyof NonNullable<Sdk.DecisionDetail["override"]>>();
    expectTypeOf<keyof NonNullable<Sidecar.DecisionDetail["confirmation"]>>().toEqualTypeOf<keyof NonNullable<Sdk.DecisionDetail["confirmation"]>>();
    expectTypeOf<Sidecar.SecurityEventRow>().toExtend<Sdk.SecurityEventRow>();
    expectTypeOf<keyof Sidecar.SecurityEventRow>().toEqualTypeOf<keyof Sdk.SecurityEventRow>();
    expectTypeOf<Sidecar.AuditStats>().toEqualTypeOf<Sdk.AuditStats>();
  });

  it("Surface B records", () => {
    expectTypeOf<Sidecar.TrustRecord>().toExtend<Sdk.TrustRecord>();
    expectTypeOf<keyof Sidecar.TrustRecord>().toEqualTypeOf<keyof Sdk.TrustRecord>();
    expectTypeOf<Sidecar.BusinessTransaction>().toExtend<Sdk.BusinessTransaction>();
    expectTypeOf<Sidecar.Verification>().toEqualTypeOf<Sdk.Verification>();
    expectTypeOf<Sidecar.Receipt>().toExtend<Sdk.Receipt>();
    expectTypeOf<keyof Sidecar.Receipt>().toEqualTypeOf<keyof Sdk.Receipt>();
    expectTypeOf<Sidecar.ReplayResult>().toEqualTypeOf<Sdk.ReplayResult>();
  });
});
