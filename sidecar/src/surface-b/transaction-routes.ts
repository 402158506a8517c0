/**
 * Business transactions (spec 4.2): `POST /execute` (the UUID check first, then `status` and `createdAt` forced),
 * `POST /transactions` (the body used as given), and the listing and reading of stored transactions.
 */
import type { FastifyRequest } from "fastify";
import { AuthorizationError, FAULT_CODES } from "@writ/runtime";
import {
  BusinessTransaction,
  CreateTransactionRequest,
  ExecuteTransactionRequest,
  RecordParams,
  TransactionPage,
  TransactionQuery,
  TrustRecord,
} from "@writ/wire";
import type { SidecarContext } from "../context.js";
import { SidecarHttpError } from "../http/errors.js";
import { defineRoute } from "../http/route.js";
import { trackDecision, type RequestDecision } from "../observability/request-decision.js";
import { securityEvent } from "../http/security-events.js";
import { isBusinessTransactionUuid } from "../trust-records/ids.js";
import { parsePage } from "./pagination.js";
import { required } from "./required.js";
import type { SurfaceBDependencies } from "./dependencies.js";
import { timestampCheck } from "./timestamps.js";
import type { StoredRecord } from "../trust-records/record-store.js";
import { TRANSACTION_MEMBERS } from "../trust-records/types.js";

const checkTimestamps = timestampCheck(ExecuteTransactionRequest);

/** What the pipeline of `POST /execute` and `POST /transactions` refuses before anything is stored (pipeline.ts). */
const PIPELINE = [
  "SIGNALS_VALIDATION_FAILED",
  "SIGNAL_VALIDATION_FAILED",
  "POLICY_NOT_FOUND",
  "POLICY_BUNDLE_MISSING",
  "POLICY_BUNDLE_INVALID",
  "SYS-006",
  ...FAULT_CODES,
  "INV-013",
  "EVALUATION_FAILED",
  "RUNTIME_NOT_CONFIGURED",
  "REPLAY_STORE_UNAVAILABLE",
  "SIGNER_UNAVAILABLE",
] as const;

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

/**
 * Spec 4.2: before anything else runs, the schema included, a body without a valid UUID (absent, not a string,
 * malformed) is refused.
 */
async function refuseWithoutUuid(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (!isBusinessTransactionUuid(isObject(body) ? body["businessTransactionId"] : undefined))
    throw SidecarHttpError.of("INVALID_BUSINESS_TRANSACTION_ID");
}

export const EXECUTE = defineRoute<SurfaceBDependencies, { Body: ExecuteTransactionRequest }>(
  {
    method: "POST",
    url: "/execute",
    scope: "deciding",
    summary: "Execute a Business Transaction: decide, seal, verify, issue a receipt, store",
    description:
      "`businessTransactionId` must be a UUID (versions 1 to 5), checked before anything else; then the body is checked whole, then its timestamps. Answered once the record is on disk.",
    tag: "transactions",
    schema: { body: ExecuteTransactionRequest },
    answers: { 200: { description: "The Execution Trust Record.", schema: TrustRecord } },
    errors: ["INVALID_BUSINESS_TRANSACTION_ID", ...PIPELINE],
    execution: true,
    options: { preValidation: refuseWithoutUuid },
  },
  ({ ctx, execute }) =>
    async (request) => {
      const given = request.body;
      checkTimestamps(given);
      const transaction: BusinessTransaction = { ...given, status: "RECEIVED", createdAt: new Date().toISOString() };
      return recordingReplays(ctx, request, transaction.businessTransactionId, execute(transaction, tracked(request, transaction)));
    },
);

export const CREATE_TRANSACTION = defineRoute<SurfaceBDependencies, { Body: CreateTransactionRequest }>(
  {
    method: "POST",
    url: "/transactions",
    scope: "deciding",
    summary: "Execute a Business Transaction used as given (the weaker form)",
    tag: "transactions",
    schema: { body: CreateTransactionRequest },
    answers: { 201: { description: "The Execution Trust Record.", schema: TrustRecord } },
    errors: PIPELINE,
    execution: true,
  },
  ({ ctx, execute }) =>
    async (request, reply) => {
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
    },
);

export const TRANSACTIONS = defineRoute<SurfaceBDependencies>(
  {
    method: "GET",
    url: "/transactions",
    scope: "deciding",
    summary: "Stored Business Transactions, oldest first, by page",
    tag: "transactions",
    checkedByHandler: { querystring: TransactionQuery },
    answers: { 200: { description: "A page.", schema: TransactionPage } },
    errors: ["RUNTIME_NOT_CONFIGURED"],
  },
  ({ records }) =>
    async (request) => {
      const { page, pageSize } = parsePage(request.query as Readonly<Record<string, unknown>>);
      const store = required(records);
      const [total, ids] = await Promise.all([store.count(), store.ids((page - 1) * pageSize, pageSize)]);
      const stored = await Promise.all(ids.map(async (id) => ({ id, stored: await store.record(id) })));
      const items = stored.flatMap(({ id, stored }) => (stored === undefined ? [] : [transactionOf(id, stored)]));
      return { items, page, pageSize, total };
    },
);

export const TRANSACTION = defineRoute<SurfaceBDependencies, { Params: RecordParams }>(
  {
    method: "GET",
    url: "/transactions/:id",
    scope: "deciding",
    summary: "A stored Business Transaction, without its evidence",
    tag: "transactions",
    // An id no record can be stored under is refused (400) before the record store is read.
    schema: { params: RecordParams },
    answers: { 200: { description: "The transaction.", schema: BusinessTransaction } },
    errors: ["TRANSACTION_NOT_FOUND", "RUNTIME_NOT_CONFIGURED"],
  },
  ({ records }) =>
    async (request) => {
      const id = request.params.id;
      const stored = await required(records).record(id);
      if (stored === undefined) throw SidecarHttpError.of("TRANSACTION_NOT_FOUND");
      return transactionOf(id, stored);
    },
);
