/**
 * The audit log when audit persistence is off (spec 1.7: optional). Records are dropped, reads find nothing, and
 * `healthy()` is false, so `GET /health` reports `audit_db: false` while execution goes on (spec 7).
 */
import type { AuditLog, AuditStats, DecisionDetail, DecisionRow, SecurityEventRow } from "./types.js";

const NO_STATS: AuditStats = {
  total_decisions: "0",
  decisions_today: "0",
  total_verifications: "0",
  valid_verifications: "0",
  invalid_verifications: "0",
  total_security_events: "0",
  total_api_calls: "0",
};

export class DisabledAuditLog implements AuditLog {
  readonly recordLog = null;
  healthy(): boolean {
    return false;
  }

  recordVerification(): void {}
  recordSecurityEvent(): void {}
  countApiCall(): void {}

  async flushed(): Promise<void> {}

  async listDecisions(): Promise<DecisionRow[]> {
    return [];
  }

  async getDecision(): Promise<DecisionDetail | null> {
    return null;
  }

  async stats(): Promise<AuditStats> {
    return NO_STATS;
  }

  async listSecurityEvents(): Promise<SecurityEventRow[]> {
    return [];
  }

  async close(): Promise<void> {}
}
