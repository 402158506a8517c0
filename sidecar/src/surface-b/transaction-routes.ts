/**
 * Business transactions (spec 4.2): `POST /execute` (the UUID check first, then `status` and `createdAt` forced),
 * `POST /transactions` (the body used as given), and the listing and reading of stored transactions.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AuthorizationError } from "@writ/runtime";
import { CreateTransactionRequest, ExecuteTransactionRequest } from "@writ/wire";
import type { SidecarContext } from "../context.js";
import { SidecarHttpError } from "../http/errors.js";
import { trackDecision, type RequestDecision } from "../observability/request-decision.js";
import { bodySchema } from "../http/validation.js";
import { securityEvent } from "../surface-a/security-events.js";
import { isBusinessTransactionUuid } from "./ids.js";
import { parsePage } from "./pagination.js";
import { transactionPipeline } from "./pipeline.js";
import { required } from "./required.js";
import { GET_ONLY, RECORD_ROUTE } from "./route-options.js";
import { timestampCheck } from "./timestamps.js";
import type { StoredRecord, TrustRecordStore } from "./record-store.js";
import { TRANSACTION_MEMBERS, type BusinessTransaction, type TrustRecord } from "./types.js";

const checkTimestamps = timestampCheck(ExecuteTransactionRequest);

/** `POST /transactions` without a `status`: the other status the spec shows. */
const DEFAULT_STATUS = "SUBMITTED";

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The Business Transaction part of a stored record: the members of spec 2.13, without what the pipeline appended. */
function transactionOf(id: string, stored: StoredRecord): unknown {
  if (stored.state === "unreadable") throw new Error(`the stored record of \`${id}\` is not valid JSON`);
  if (!isObject(stored.value)) return stored.value;
  const record = stored.value;
  return Object.fromEntries(TRANSACTION_MEMBERS.filter((name) => Object.hasOwn(record, name)).map((name) => [name, record[name]]));
}

/** A second use of a businessTransactionId is a replay attempt: recorded as a security event, then answered as usual. */
async function recordingReplays(ctx: SidecarContext, request: FastifyRequest, id: string, run: Promise<TrustRecord>): Promise<TrustRecord> {
  try {
    return await run;
  } catch (e) {
    if ((e instanceof AuthorizationError || e instanceof SidecarHttpError) && e.code === "INV-013") {
      ctx.audit.recordSecurityEvent(securityEvent(request, "replay_attempt", "businessTransactionId already consumed", id));
    }
    throw e;
  }
}

/** The decision of a transaction, for the logs, spans and metrics. */
function tracked(request: FastifyRequest, transaction: BusinessTransaction): RequestDecision {
  return trackDecision(request, {
    executionId: transaction.businessTransactionId,
    policyId: transaction.policy.name,
    policyVersion: transaction.policy.version,
  });
}

export function transactionRoutes(app: FastifyInstance, ctx: SidecarContext, records: TrustRecordStore | null): void {
  const execute = transactionPipeline(ctx, records);
  const uuidFirst = {
    // Spec 4.2: before anything else runs, the schema included, a body without a valid UUID (absent, not a string,
    // malformed) is refused.
    preValidation: async (request: FastifyRequest) => {
      const body = request.body;
      if (!isBusinessTransactionUuid(isObject(body) ? body["businessTransactionId"] : undefined))
        throw SidecarHttpError.of("INVALID_BUSINESS_TRANSACTION_ID");
    },
  };
  app.post<{ Body: ExecuteTransactionRequest }>("/execute", { ...bodySchema(ExecuteTransactionRequest), ...uuidFirst }, async (request) => {
    const given = request.body;
    checkTimestamps(given);
    const transaction: BusinessTransaction = { ...given, status: "RECEIVED", createdAt: new Date().toISOString() };
    return recordingReplays(ctx, request, transaction.businessTransactionId, execute(transaction, tracked(request, transaction)));
  });

  app.post<{ Body: CreateTransactionRequest }>("/transactions", bodySchema(CreateTransactionRequest), async (request, reply) => {
    const given = request.body;
    const transaction: BusinessTransaction = {
      ...given,
      status: given.status ?? DEFAULT_STATUS,
      createdAt: given.createdAt ?? new Date().toISOString(),
    };
    const record = await recordingReplays(
      ctx,
      request,
      transaction.businessTransactionId,
      execute(transaction, tracked(request, transaction)),
    );
    return reply.code(201).send(record);
  });

  app.get("/transactions", GET_ONLY, async (request) => {
    const { page, pageSize } = parsePage(request.query as Readonly<Record<string, unknown>>);
    const store = required(records);
    const [total, ids] = await Promise.all([store.count(), store.ids((page - 1) * pageSize, pageSize)]);
    const stored = await Promise.all(ids.map(async (id) => ({ id, stored: await store.record(id) })));
    const items = stored.flatMap(({ id, stored }) => (stored === undefined ? [] : [transactionOf(id, stored)]));
    return { items, page, pageSize, total };
  });

  app.get<{ Params: { id: string } }>("/transactions/:id", RECORD_ROUTE, async (request) => {
    const id = request.params.id;
    const stored = await required(records).record(id);
    if (stored === undefined) throw SidecarHttpError.of("TRANSACTION_NOT_FOUND");
    return transactionOf(id, stored);
  });
}
