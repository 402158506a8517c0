import { describe, expect, it } from "vitest";
import { SECURITY_FIELD_LIMITS, securityEventRow } from "../../src/audit/security-event.js";

describe("securityEventRow", () => {
  it("clips every field and never leaves half a surrogate pair", () => {
    const row = securityEventRow(
      {
        type: "authentication_failed",
        method: "M".repeat(100),
        path: "/" + "p".repeat(2_000),
        ip: "i".repeat(100),
        detail: "d".repeat(SECURITY_FIELD_LIMITS.detail - 1) + "😀",
        executionId: "e".repeat(1_000),
      },
      "1-0",
      "2025-03-10T00:00:00.000Z",
    );
    expect(row.method).toHaveLength(SECURITY_FIELD_LIMITS.method);
    expect(row.path).toHaveLength(SECURITY_FIELD_LIMITS.path);
    expect(row.ip).toHaveLength(SECURITY_FIELD_LIMITS.ip);
    expect(row.executionId).toHaveLength(SECURITY_FIELD_LIMITS.executionId);
    expect(row.detail).toBe("d".repeat(SECURITY_FIELD_LIMITS.detail - 1));
    expect(row.detail.isWellFormed()).toBe(true);
  });

  it("leaves out an absent executionId and cuts the query string", () => {
    const row = securityEventRow(
      { type: "rate_limited", method: "POST", path: "/execute?token=abc?x", ip: "::1", detail: "limit" },
      "1-0",
      "t",
    );
    expect(row).toEqual({ id: "1-0", at: "t", type: "rate_limited", method: "POST", path: "/execute", ip: "::1", detail: "limit" });
  });
});
