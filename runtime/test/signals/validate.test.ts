import { describe, expect, it } from "vitest";
import { TIMESTAMP_PATTERN, createSignalValidator, isTimestamp } from "../../src/index.js";

const schema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: {
    amount: { type: "number", minimum: 0 },
    count: { type: "integer", maximum: 10 },
    currency: { type: "string", enum: ["USD", "EUR"] },
    code: { type: "string", pattern: "^[A-Z]{2}$", minLength: 2, maxLength: 2 },
    flag: { type: "boolean" },
    note: { type: "string" },
  },
  required: ["amount", "currency"],
  additionalProperties: false,
};
const validate = createSignalValidator(schema);

describe("signal validation with the VAL codes of docs/errors.md", () => {
  it.each([
    ["VAL-003", { amount: 1, currency: "USD", extra: 1 }, "extra"],
    ["VAL-004", { currency: "USD" }, "amount"],
    ["VAL-006", { amount: 1, currency: "USD", note: 5 }, "note"],
    ["VAL-007", { amount: "1", currency: "USD" }, "amount"],
    ["VAL-008", { amount: 1, currency: "USD", count: 1.5 }, "count"],
    ["VAL-009", { amount: 1, currency: "USD", flag: "true" }, "flag"],
    ["VAL-010", { amount: 1, currency: "YEN" }, "currency"],
    ["VAL-011", { amount: -1, currency: "USD" }, "amount"],
    ["VAL-011", { amount: 1, currency: "USD", count: 11 }, "count"],
    ["VAL-012", { amount: 1, currency: "USD", code: "us" }, "code"],
  ])("%s for %j", (code, signals, signal) => {
    const r = validate(signals);
    expect(r.valid).toBe(false);
    if (!r.valid) expect(r.errors).toContainEqual(expect.objectContaining({ code, signal }));
  });

  it("reports every failure at once and coerces nothing", () => {
    const signals = { amount: "5", currency: "YEN", flag: 1, extra: true };
    const copy = structuredClone(signals);
    const r = validate(signals);
    expect(r.valid).toBe(false);
    if (!r.valid) expect(r.errors.map((e) => e.code).sort()).toEqual(["VAL-003", "VAL-007", "VAL-009", "VAL-010"]);
    expect(signals).toEqual(copy);
  });

  it.each([
    ["2024-02-29T23:59:59.999+05:30", true],
    ["2025-02-29T00:00:00Z", false],
    ["2025-04-31T00:00:00Z", false],
    ["2025-12-31T23:59:60Z", false],
    ["2025-01-01T00:00:00", false],
    ["2025-01-01 00:00:00Z", false],
  ])("timestamp %s is valid: %s", (at, ok) => {
    const v = createSignalValidator({
      type: "object",
      properties: { at: { type: "string", format: "date-time", pattern: TIMESTAMP_PATTERN } },
      required: ["at"],
      additionalProperties: false,
    });
    const r = v({ at });
    expect(r.valid).toBe(ok);
    if (!r.valid) expect(r.errors.map((e) => e.code)).toContain("VAL-012");
    expect(isTimestamp(at)).toBe(ok);
  });

  it("accepts valid signals unchanged and refuses a non-object", () => {
    expect(validate({ amount: 0, currency: "EUR" })).toEqual({ valid: true });
    expect(validate([1])).toEqual({ valid: false, errors: [{ code: "VAL-001", signal: "", message: "signals must be a JSON object" }] });
  });
});
