/**
 * The runtime's refusals as HTTP answers: the one mapping the sidecar answers with and the SDK's embedded authorizer
 * throws (errors/answer.ts).
 */
import { describe, expect, it } from "vitest";
import {
  AuthorizationError,
  IntegrityError,
  OverrideError,
  ReplayCapacityError,
  ReplayStoreClosedError,
  StrictJsonError,
  answerOf,
} from "../../src/index.js";

describe("answerOf", () => {
  it("answers a signal validation failure with every failure in details", () => {
    const details = [{ code: "VAL-004", signal: "amount", message: "required signal missing" }];
    expect(answerOf(new AuthorizationError("SIGNALS_VALIDATION_FAILED", "bad", details))).toEqual({
      status: 422,
      body: { error: "Signals validation failed", details },
      code: "SIGNALS_VALIDATION_FAILED",
    });
  });

  it.each([
    [new AuthorizationError("INV-013", "x"), 422, "[INV-013@replay] execution already consumed: use a new executionId"],
    [new AuthorizationError("POLICY_NOT_FOUND", "x"), 404, "Policy not found"],
    [new AuthorizationError("RUNTIME_NOT_CONFIGURED", "x"), 503, "Governed execution runtime not configured"],
    [new OverrideError("SYS-021", "x"), 404, "Pending override not found"],
    [new OverrideError("SYS-023", "x"), 422, "[SYS-023@override] override lineage mismatch"],
    [new OverrideError("OVERRIDE_ALREADY_RESOLVED", "x"), 409, "Override already resolved"],
    [
      new IntegrityError("INTEGRITY_ALREADY_CONFIRMED", "x"),
      409,
      "[INTEGRITY_ALREADY_CONFIRMED@confirm-execution] execution already confirmed",
    ],
    [new ReplayCapacityError(10), 503, "replay store unavailable"],
    [new ReplayStoreClosedError(), 503, "replay store unavailable"],
  ])("%s answers %i %s", (error, status, message) => {
    expect(answerOf(error)).toMatchObject({ status, body: { error: message } });
  });

  it("is null for anything that is not a refusal (a fault)", () => {
    expect(answerOf(new Error("boom"))).toBeNull();
    expect(answerOf(new StrictJsonError("duplicate key", 1, 2))).toBeNull();
    expect(answerOf("a string")).toBeNull();
  });
});
