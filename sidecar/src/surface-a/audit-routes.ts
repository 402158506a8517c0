/**
 * The audit endpoints (spec 4.1): decisions with filters and paging, one decision with its override and
 * confirmation, the stats, and the security events. Query defaults and maximums: docs/audit.md.
 */
import { AuditStats, DecisionDetail, DecisionList, DecisionParams, DecisionQuery, SecurityEventList, SecurityEventQuery } from "@writ/wire";
import { parseDecisionQuery, parseSecurityQuery, QueryError } from "./audit-query.js";
import { checkListed } from "../audit/trail-agreement.js";
import { StoreUnavailableError } from "@writ/runtime";
import { SidecarHttpError, invalidRequest } from "../http/errors.js";
import { defineRoute } from "../http/route.js";
import type { SurfaceADependencies } from "./dependencies.js";

/**
 * `read`, with a failure of the database it reads answered 503 AUDIT_STORE_UNAVAILABLE (the cause, which names the
 * database, in the log): an audit read is not a decision, and its database may be the read replica
 * (docs/fleet.md, "Read replicas"). The export route shares it.
 */
export async function auditRead<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof StoreUnavailableError) throw SidecarHttpError.causedBy("AUDIT_STORE_UNAVAILABLE", e);
    throw e;
  }
}

/** `parse`, with a QueryError answered 400 (the other audit routes share it). */
export function parsed<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof QueryError) throw invalidRequest([{ path: e.location, message: e.message }]);
    throw e;
  }
}

export const DECISIONS = defineRoute<SurfaceADependencies>(
  {
    method: "GET",
    url: "/audit/decisions",
    scope: "reading",
    summary: "Audited decisions, newest first, with filters and paging",
    tag: "audit",
    checkedByHandler: { querystring: DecisionQuery },
    answers: { 200: { description: "The decisions.", schema: DecisionList } },
    errors: ["AUDIT_TRAIL_DISAGREES", "AUDIT_STORE_UNAVAILABLE"],
  },
  ({ ctx }) =>
    async (request) => {
      const query = parsed(() => parseDecisionQuery(request.query as Record<string, unknown>));
      const rows = await auditRead(() => ctx.audit.listDecisions(query));
      checkListed(rows, query);
      return rows;
    },
);

export const DECISION = defineRoute<SurfaceADependencies, { Params: DecisionParams }>(
  {
    method: "GET",
    url: "/audit/decisions/:executionId",
    scope: "reading",
    summary: "One audited decision, with its override and confirmation",
    tag: "audit",
    // An executionId longer than any `POST /evaluate` takes is refused by its schema, before any lookup.
    schema: { params: DecisionParams },
    answers: { 200: { description: "The decision.", schema: DecisionDetail } },
    errors: ["DECISION_NOT_FOUND", "AUDIT_TRAIL_DISAGREES", "AUDIT_STORE_UNAVAILABLE"],
  },
  ({ ctx }) =>
    async (request) => {
      const detail = await auditRead(() => ctx.audit.getDecision(request.params.executionId));
      if (detail === null) throw SidecarHttpError.of("DECISION_NOT_FOUND");
      return detail;
    },
);

export const AUDIT_STATS = defineRoute<SurfaceADependencies>(
  {
    method: "GET",
    url: "/audit/stats",
    scope: "reading",
    summary: "Counters of the audit trail",
    tag: "audit",
    answers: { 200: { description: "The counters, as decimal strings.", schema: AuditStats } },
    errors: ["AUDIT_STORE_UNAVAILABLE"],
  },
  ({ ctx }) =>
    async () =>
      auditRead(() => ctx.audit.stats()),
);

export const SECURITY_EVENTS = defineRoute<SurfaceADependencies>(
  {
    method: "GET",
    url: "/audit/security",
    scope: "reading",
    summary: "Security events, newest first",
    tag: "audit",
    checkedByHandler: { querystring: SecurityEventQuery },
    answers: { 200: { description: "The events.", schema: SecurityEventList } },
    errors: ["AUDIT_STORE_UNAVAILABLE"],
  },
  ({ ctx }) =>
    async (request) => {
      const query = parsed(() => parseSecurityQuery(request.query as Record<string, unknown>));
      return auditRead(() => ctx.audit.listSecurityEvents(query));
    },
);
