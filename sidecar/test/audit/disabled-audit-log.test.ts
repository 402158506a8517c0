import { describe, expect, it } from "vitest";
import { DisabledAuditLog } from "../../src/audit/disabled-audit-log.js";
import type { AuditLog } from "../../src/audit/types.js";
import { at } from "./support.js";

describe("DisabledAuditLog", () => {
  it("is unhealthy, drops records and reads nothing", async () => {
    // Used, as by the server, through the interface.
    const log: AuditLog = new DisabledAuditLog();
    log.recordVerification({ executionId: "a", valid: true, checks: {}, errors: [], recordedAt: at(0) });
    log.recordSecurityEvent({ type: "rate_limited", method: "POST", path: "/execute", ip: "127.0.0.1", detail: "limit" });
    log.countApiCall();
    await log.flushed();

    expect(log.healthy()).toBe(false);
    expect(await log.listDecisions({ limit: 50, offset: 0 })).toEqual([]);
    expect(await log.getDecision("a")).toBeNull();
    expect(await log.listSecurityEvents({ limit: 50 })).toEqual([]);
    expect(await log.stats()).toEqual({
      total_decisions: "0",
      decisions_today: "0",
      total_verifications: "0",
      valid_verifications: "0",
      invalid_verifications: "0",
      total_security_events: "0",
      total_api_calls: "0",
    });
    await log.close();
  });
});
