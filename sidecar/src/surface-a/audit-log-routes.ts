/**
 * The tamper-evident audit record log over HTTP (docs/audit.md, "Serving the log"), behind the reading key like every
 * audit route: the logs the store holds, a log's state, its signed checkpoints, an inclusion proof of a decision, a
 * consistency proof between two checkpoints, and the streamed NDJSON export an auditor verifies offline with
 * `writ audit verify`. Every route but the inclusion proof reads this sidecar's log, or the one `logId` names (on a
 * fleet's database, any sidecar's); the inclusion proof finds the log that holds the decision.
 */
import { Readable } from "node:stream";
import {
  AuditLogList,
  AuditLogStatus,
  CheckpointList,
  CheckpointParams,
  CheckpointQuery,
  ConsistencyProofJson,
  ConsistencyProofQuery,
  ExportQuery,
  InclusionProofJson,
  InclusionProofQuery,
  LogQuery,
  SignedCheckpoint,
} from "@writ/wire";
import { knownOnly, logQuery, logSize, logSizeParam, textParameter } from "./audit-query.js";
import type { ExportLine, RecordLog } from "../audit/record-log/record-log.js";
import type { SidecarContext } from "../context.js";
import { SidecarHttpError, invalidRequest } from "../http/errors.js";
import { defineRoute } from "../http/route.js";
import { auditRead, parsed } from "./audit-routes.js";
import type { SurfaceADependencies } from "./dependencies.js";

const MAX_CHECKPOINTS_PAGE = 1_000;

type Query = { Querystring: Record<string, unknown> };

function recordLogOf(ctx: SidecarContext): RecordLog {
  const log = ctx.audit.recordLog;
  if (log === null) throw SidecarHttpError.of("AUDIT_LOG_UNAVAILABLE");
  return log;
}

export const AUDIT_LOGS = defineRoute<SurfaceADependencies>(
  {
    method: "GET",
    url: "/audit/logs",
    scope: "reading",
    summary: "The tamper-evident audit record logs the store holds",
    tag: "audit log",
    answers: { 200: { description: "The logs: this sidecar's, and on a fleet's database every other sidecar's.", schema: AuditLogList } },
    errors: ["AUDIT_LOG_UNAVAILABLE"],
  },
  ({ ctx }) =>
    async () => ({ logIds: await recordLogOf(ctx).logIds() }),
);

export const AUDIT_LOG = defineRoute<SurfaceADependencies, Query>(
  {
    method: "GET",
    url: "/audit/log",
    scope: "reading",
    summary: "The state of a tamper-evident audit record log",
    tag: "audit log",
    checkedByHandler: { querystring: LogQuery },
    answers: { 200: { description: "The log's state.", schema: AuditLogStatus } },
    errors: ["AUDIT_LOG_UNAVAILABLE", "LOG_NOT_FOUND"],
  },
  ({ ctx }) =>
    async (request) => {
      const log = recordLogOf(ctx);
      const status = await log.status(parsed(() => logQuery(request.query, LogQuery, log.logId)));
      if (status === null) throw SidecarHttpError.of("LOG_NOT_FOUND");
      return status;
    },
);

export const CHECKPOINTS = defineRoute<SurfaceADependencies, Query>(
  {
    method: "GET",
    url: "/audit/checkpoints",
    scope: "reading",
    summary: "The log's signed checkpoints, oldest first",
    tag: "audit log",
    checkedByHandler: { querystring: CheckpointQuery },
    answers: { 200: { description: "The checkpoints.", schema: CheckpointList } },
    errors: ["AUDIT_LOG_UNAVAILABLE", "LOG_NOT_FOUND"],
  },
  ({ ctx }) =>
    async (request) => {
      const log = recordLogOf(ctx);
      const logId = parsed(() => logQuery(request.query, CheckpointQuery, log.logId));
      const from = parsed(() => logSize(request.query, "from", 0));
      const limit = Math.min(
        parsed(() => logSize(request.query, "limit", 100)),
        MAX_CHECKPOINTS_PAGE,
      );
      await known(log, logId);
      return log.checkpoints(logId, from, limit);
    },
);

export const CHECKPOINT = defineRoute<SurfaceADependencies, { Params: { size: string } } & Query>(
  {
    method: "GET",
    url: "/audit/checkpoints/:size",
    scope: "reading",
    summary: "The signed checkpoint of a log size",
    tag: "audit log",
    checkedByHandler: { params: CheckpointParams, querystring: LogQuery },
    answers: { 200: { description: "The checkpoint.", schema: SignedCheckpoint } },
    errors: ["AUDIT_LOG_UNAVAILABLE", "CHECKPOINT_NOT_FOUND"],
  },
  ({ ctx }) =>
    async (request) => {
      const log = recordLogOf(ctx);
      const logId = parsed(() => logQuery(request.query, LogQuery, log.logId));
      const checkpoint = await log.checkpointAt(
        logId,
        parsed(() => logSizeParam(request.params, "size")),
      );
      if (checkpoint === null) throw SidecarHttpError.of("CHECKPOINT_NOT_FOUND");
      return checkpoint;
    },
);

export const INCLUSION_PROOF = defineRoute<SurfaceADependencies, Query>(
  {
    method: "GET",
    url: "/audit/proofs/inclusion",
    scope: "reading",
    summary: "Proof that a decision's record is in a checkpoint of the log that holds it",
    tag: "audit log",
    checkedByHandler: { querystring: InclusionProofQuery },
    answers: { 200: { description: "The inclusion proof.", schema: InclusionProofJson } },
    errors: ["AUDIT_LOG_UNAVAILABLE", "NOT_IN_CHECKPOINT"],
  },
  ({ ctx }) =>
    async (request) => {
      const log = recordLogOf(ctx);
      parsed(() => knownOnly(request.query, InclusionProofQuery));
      const executionId = parsed(() => textParameter(request.query, InclusionProofQuery, "executionId"));
      if (executionId === undefined) throw invalidRequest([{ path: "querystring/executionId", message: "is required" }]);
      const at = request.query["size"] === undefined ? undefined : parsed(() => logSize(request.query, "size"));
      const proof = await log.decisionInclusionProof(executionId, at);
      if (proof === null) throw SidecarHttpError.of("NOT_IN_CHECKPOINT");
      return proof;
    },
);

export const CONSISTENCY_PROOF = defineRoute<SurfaceADependencies, Query>(
  {
    method: "GET",
    url: "/audit/proofs/consistency",
    scope: "reading",
    summary: "Proof that one checkpoint's log is a prefix of another's",
    tag: "audit log",
    checkedByHandler: { querystring: ConsistencyProofQuery },
    answers: { 200: { description: "The consistency proof.", schema: ConsistencyProofJson } },
    errors: ["AUDIT_LOG_UNAVAILABLE", "CHECKPOINT_NOT_FOUND"],
  },
  ({ ctx }) =>
    async (request) => {
      const log = recordLogOf(ctx);
      const logId = parsed(() => logQuery(request.query, ConsistencyProofQuery, log.logId));
      const from = parsed(() => logSize(request.query, "from"));
      const to = parsed(() => logSize(request.query, "to"));
      if (from > to) throw invalidRequest([{ path: "querystring/from", message: "must not be above `to`" }]);
      const proof = await log.consistencyProof(logId, from, to);
      if (proof === null) throw SidecarHttpError.of("CHECKPOINT_NOT_FOUND");
      return proof;
    },
);

/** Streamed line by line from the store: the export of a long log is never held in memory. */
export const AUDIT_EXPORT = defineRoute<SurfaceADependencies, Query>(
  {
    method: "GET",
    url: "/audit/export",
    scope: "reading",
    summary: "The log as NDJSON, for `writ audit verify`",
    description:
      'One JSON object a line: `start`, then each `entry` (and a `checkpoint` after each entry that completes one), then any `unlogged` record (docs/audit.md, "Export").',
    tag: "audit log",
    checkedByHandler: { querystring: ExportQuery },
    answers: { 200: { description: "The export, streamed.", text: "application/x-ndjson" } },
    errors: ["AUDIT_LOG_UNAVAILABLE", "CHECKPOINT_NOT_FOUND", "LOG_NOT_FOUND", "AUDIT_STORE_UNAVAILABLE"],
  },
  ({ ctx }) =>
    async (request, reply) => {
      const log = recordLogOf(ctx);
      const logId = parsed(() => logQuery(request.query, ExportQuery, log.logId));
      const from = parsed(() => logSize(request.query, "from", 0));
      await known(log, logId);
      // Everything this sidecar wrote so far is sequenced and checkpointed first, so the export of its own log covers it
      // (as far as the database the export reads has it: docs/fleet.md, "Read replicas").
      if (logId === log.logId) await log.checkpointNow();
      const lines = log.export(logId, from);
      // Its first line is read before answering: a checkpoint `from` the export's database lacks (404), or that database
      // failing (503), is answered as the error it is (JSON), never inside or as the end of an NDJSON stream.
      const first = await auditRead(() => lines.next()).catch((error: unknown) => {
        throw error instanceof RangeError ? SidecarHttpError.of("CHECKPOINT_NOT_FOUND") : error;
      });
      return reply.type("application/x-ndjson").send(Readable.from(ndjson(first, lines)));
    },
);

/**
 * `lines` as NDJSON text, `first` (already read) first. Not a generator: `return()` (the client gone, the stream
 * destroyed) reaches `lines` even before the stream read anything, so the export gives back what it holds.
 */
function ndjson(first: IteratorResult<ExportLine>, lines: AsyncGenerator<ExportLine>): AsyncIterableIterator<string> {
  let next: IteratorResult<ExportLine> | null = first;
  const text: AsyncIterableIterator<string> = {
    async next() {
      const line = next ?? (await lines.next());
      next = null;
      return line.done === true ? { done: true, value: undefined } : { done: false, value: `${JSON.stringify(line.value)}\n` };
    },
    async return() {
      await lines.return(undefined);
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]: () => text,
  };
  return text;
}

async function known(log: RecordLog, logId: string): Promise<void> {
  if ((await log.status(logId)) === null) throw SidecarHttpError.of("LOG_NOT_FOUND");
}
