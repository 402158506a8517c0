/**
 * The tamper-evident audit record log over HTTP (docs/audit.md, "Tamper evidence"), behind the API key like every
 * audit route: the log's state, its signed checkpoints, an inclusion proof of a decision, a consistency proof between
 * two checkpoints, and the streamed NDJSON export an auditor verifies offline with `writ audit verify`.
 */
import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { logSize } from "../audit/query.js";
import type { RecordLog } from "../audit/record-log/record-log.js";
import type { SidecarContext } from "../context.js";
import { SidecarHttpError, invalidRequest } from "../http/errors.js";
import { parsed } from "./audit-routes.js";

const MAX_CHECKPOINTS_PAGE = 1_000;

function recordLogOf(ctx: SidecarContext): RecordLog {
  const log = ctx.audit.recordLog;
  if (log === null) throw SidecarHttpError.of("AUDIT_LOG_UNAVAILABLE");
  return log;
}

export function auditLogRoutes(app: FastifyInstance, ctx: SidecarContext): void {
  app.get("/audit/log", async () => recordLogOf(ctx).status());

  app.get<{ Querystring: Record<string, unknown> }>("/audit/checkpoints", async (request) => {
    const from = parsed(() => logSize(request.query, "from", 0));
    const limit = Math.min(parsed(() => logSize(request.query, "limit", 100)), MAX_CHECKPOINTS_PAGE);
    return recordLogOf(ctx).checkpoints(from, limit);
  });

  app.get<{ Params: { size: string } }>("/audit/checkpoints/:size", async (request) => {
    const checkpoint = recordLogOf(ctx).checkpointAt(parsed(() => logSize(request.params, "size")));
    if (checkpoint === null) throw SidecarHttpError.of("CHECKPOINT_NOT_FOUND");
    return checkpoint;
  });

  app.get<{ Querystring: Record<string, unknown> }>("/audit/proofs/inclusion", async (request) => {
    const { executionId } = request.query;
    if (typeof executionId !== "string" || executionId === "") throw invalidRequest([{ path: "querystring/executionId", message: "is required" }]);
    const log = recordLogOf(ctx);
    const at = request.query["size"] === undefined ? undefined : parsed(() => logSize(request.query, "size"));
    if (at !== undefined && log.checkpointAt(at) === null) throw SidecarHttpError.of("CHECKPOINT_NOT_FOUND");
    const proof = await log.decisionInclusionProof(executionId, at);
    if (proof === null) throw SidecarHttpError.of("NOT_IN_CHECKPOINT");
    return proof;
  });

  app.get<{ Querystring: Record<string, unknown> }>("/audit/proofs/consistency", async (request) => {
    const from = parsed(() => logSize(request.query, "from"));
    const to = parsed(() => logSize(request.query, "to"));
    if (from > to) throw invalidRequest([{ path: "querystring/from", message: "must not be above `to`" }]);
    const proof = recordLogOf(ctx).consistencyProof(from, to);
    if (proof === null) throw SidecarHttpError.of("CHECKPOINT_NOT_FOUND");
    return proof;
  });

  // Streamed line by line from the store: the export of a long log is never held in memory.
  app.get<{ Querystring: Record<string, unknown> }>("/audit/export", async (request, reply) => {
    const from = parsed(() => logSize(request.query, "from", 0));
    const log = recordLogOf(ctx);
    if (from !== 0 && log.checkpointAt(from) === null) throw SidecarHttpError.of("CHECKPOINT_NOT_FOUND");
    // Everything written so far is sequenced and checkpointed first, so the export covers it.
    await log.checkpointNow();
    const lines = (function* () {
      for (const line of log.export(from)) yield `${JSON.stringify(line)}\n`;
    })();
    return reply.type("application/x-ndjson").send(Readable.from(lines));
  });
}
