/**
 * The tamper-evident audit record log over HTTP (docs/audit.md, "Serving the log"), behind the reading key like every
 * audit route: the logs the store holds, a log's state, its signed checkpoints, an inclusion proof of a decision, a
 * consistency proof between two checkpoints, and the streamed NDJSON export an auditor verifies offline with
 * `writ audit verify`. Every route but the inclusion proof reads this sidecar's log, or the one `logId` names (on a
 * fleet's database, any sidecar's); the inclusion proof finds the log that holds the decision.
 */
import { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { CheckpointQuery, ConsistencyProofQuery, ExportQuery, InclusionProofQuery, LogQuery } from "@writ/wire";
import { knownOnly, logQuery, logSize, logSizeParam, textParameter } from "../audit/query.js";
import type { RecordLog } from "../audit/record-log/record-log.js";
import type { SidecarContext } from "../context.js";
import { SidecarHttpError, invalidRequest } from "../http/errors.js";
import { parsed } from "./audit-routes.js";

const MAX_CHECKPOINTS_PAGE = 1_000;

type Query = { Querystring: Record<string, unknown> };

function recordLogOf(ctx: SidecarContext): RecordLog {
  const log = ctx.audit.recordLog;
  if (log === null) throw SidecarHttpError.of("AUDIT_LOG_UNAVAILABLE");
  return log;
}

export function auditLogRoutes(app: FastifyInstance, ctx: SidecarContext): void {
  app.get("/audit/logs", async () => ({ logIds: await recordLogOf(ctx).logIds() }));

  app.get<Query>("/audit/log", async (request) => {
    const log = recordLogOf(ctx);
    const status = await log.status(parsed(() => logQuery(request.query, LogQuery, log.logId)));
    if (status === null) throw SidecarHttpError.of("LOG_NOT_FOUND");
    return status;
  });

  app.get<Query>("/audit/checkpoints", async (request) => {
    const log = recordLogOf(ctx);
    const logId = parsed(() => logQuery(request.query, CheckpointQuery, log.logId));
    const from = parsed(() => logSize(request.query, "from", 0));
    const limit = Math.min(
      parsed(() => logSize(request.query, "limit", 100)),
      MAX_CHECKPOINTS_PAGE,
    );
    await known(log, logId);
    return log.checkpoints(logId, from, limit);
  });

  app.get<{ Params: { size: string } } & Query>("/audit/checkpoints/:size", async (request) => {
    const log = recordLogOf(ctx);
    const logId = parsed(() => logQuery(request.query, LogQuery, log.logId));
    const checkpoint = await log.checkpointAt(
      logId,
      parsed(() => logSizeParam(request.params, "size")),
    );
    if (checkpoint === null) throw SidecarHttpError.of("CHECKPOINT_NOT_FOUND");
    return checkpoint;
  });

  app.get<Query>("/audit/proofs/inclusion", async (request) => {
    const log = recordLogOf(ctx);
    parsed(() => knownOnly(request.query, InclusionProofQuery));
    const executionId = parsed(() => textParameter(request.query, InclusionProofQuery, "executionId"));
    if (executionId === undefined) throw invalidRequest([{ path: "querystring/executionId", message: "is required" }]);
    const at = request.query["size"] === undefined ? undefined : parsed(() => logSize(request.query, "size"));
    const proof = await log.decisionInclusionProof(executionId, at);
    if (proof === null) throw SidecarHttpError.of("NOT_IN_CHECKPOINT");
    return proof;
  });

  app.get<Query>("/audit/proofs/consistency", async (request) => {
    const log = recordLogOf(ctx);
    const logId = parsed(() => logQuery(request.query, ConsistencyProofQuery, log.logId));
    const from = parsed(() => logSize(request.query, "from"));
    const to = parsed(() => logSize(request.query, "to"));
    if (from > to) throw invalidRequest([{ path: "querystring/from", message: "must not be above `to`" }]);
    const proof = await log.consistencyProof(logId, from, to);
    if (proof === null) throw SidecarHttpError.of("CHECKPOINT_NOT_FOUND");
    return proof;
  });

  // Streamed line by line from the store: the export of a long log is never held in memory.
  app.get<Query>("/audit/export", async (request, reply) => {
    const log = recordLogOf(ctx);
    const logId = parsed(() => logQuery(request.query, ExportQuery, log.logId));
    const from = parsed(() => logSize(request.query, "from", 0));
    await known(log, logId);
    if (from !== 0 && (await log.checkpointAt(logId, from)) === null) throw SidecarHttpError.of("CHECKPOINT_NOT_FOUND");
    // Everything this sidecar wrote so far is sequenced and checkpointed first, so the export of its own log covers it.
    if (logId === log.logId) await log.checkpointNow();
    const lines = (async function* () {
      for await (const line of log.export(logId, from)) yield `${JSON.stringify(line)}\n`;
    })();
    return reply.type("application/x-ndjson").send(Readable.from(lines));
  });
}

async function known(log: RecordLog, logId: string): Promise<void> {
  if ((await log.status(logId)) === null) throw SidecarHttpError.of("LOG_NOT_FOUND");
}
