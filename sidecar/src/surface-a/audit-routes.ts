/**
 * The audit endpoints (spec 4.1): decisions with filters and paging, one decision with its override and
 * confirmation, the stats, and the security events. Query defaults and maximums: docs/audit.md.
 */
import type { FastifyInstance } from "fastify";
import { DecisionParams } from "@writ/wire";
import { parseDecisionQuery, parseSecurityQuery, QueryError } from "../audit/query.js";
import type { SidecarContext } from "../context.js";
import { SidecarHttpError, invalidRequest } from "../http/errors.js";

/** `parse`, with a QueryError answered 400 (the other audit routes share it). */
export function parsed<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof QueryError) throw invalidRequest([{ path: e.location, message: e.message }]);
    throw e;
  }
}

export function auditRoutes(app: FastifyInstance, ctx: SidecarContext): void {
  app.get("/audit/decisions", async (request) => {
    const query = parsed(() => parseDecisionQuery(request.query as Record<string, unknown>));
    return ctx.audit.listDecisions(query);
  });

  // An executionId longer than any `POST /evaluate` takes is refused by its schema, before any lookup.
  app.get<{ Params: DecisionParams }>("/audit/decisions/:executionId", { schema: { params: DecisionParams } }, async (request) => {
    const detail = await ctx.audit.getDecision(request.params.executionId);
    if (detail === null) throw SidecarHttpError.of("DECISION_NOT_FOUND");
    return detail;
  });

  app.get("/audit/stats", async () => ctx.audit.stats());

  app.get("/audit/security", async (request) => {
    const query = parsed(() => parseSecurityQuery(request.query as Record<string, unknown>));
    return ctx.audit.listSecurityEvents(query);
  });
}
