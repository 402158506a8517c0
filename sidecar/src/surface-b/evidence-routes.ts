/**
 * The evidence of a stored transaction (spec 4.2): the whole Execution Trust Record, a fresh verification (kept in
 * the record's history) and the latest one, a new receipt and the latest one, and the signature-only replay check.
 * Every new verification or receipt is on disk before it is answered. A record's id is checked against
 * @writ/wire's `RecordParams` before the handler runs, so an id no record can be stored under is 400 and never reaches
 * the record store.
 */
import { Receipt, RecordParams, ReplayResult, TransactionRef, TrustRecord, Verification } from "@writ/wire";
import { SidecarHttpError } from "../http/errors.js";
import { defineRoute } from "../http/route.js";
import { checkRecord, checkSeal, verificationOf } from "./check.js";
import { required } from "./required.js";
import { issueReceipt } from "./seal.js";
import type { StoredRecord, TrustRecordStore } from "../trust-records/record-store.js";
import type { SurfaceBDependencies } from "./dependencies.js";

type IdParams = { Params: RecordParams };
type RefBody = { Body: TransactionRef };

async function storedRecord(store: TrustRecordStore, id: string): Promise<StoredRecord> {
  const stored = await store.record(id);
  if (stored === undefined) throw SidecarHttpError.of("TRUST_RECORD_NOT_FOUND");
  return stored;
}

export const TRUST_RECORD = defineRoute<SurfaceBDependencies, IdParams>(
  {
    method: "GET",
    url: "/trust-records/:id",
    scope: "deciding",
    summary: "The whole Execution Trust Record, with its latest verification and receipt",
    tag: "evidence",
    schema: { params: RecordParams },
    answers: { 200: { description: "The trust record, as stored.", schema: TrustRecord } },
    errors: ["TRUST_RECORD_NOT_FOUND", "RUNTIME_NOT_CONFIGURED"],
  },
  ({ records }) =>
    async (request) => {
      const id = request.params.id;
      const store = required(records);
      const stored = await storedRecord(store, id);
      if (stored.state === "unreadable") throw new Error(`the stored record of \`${id}\` is not valid JSON`);
      const value = stored.value;
      // A record changed on disk into something else than an object is shown as it is stored.
      if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
      const [verification, receipt] = await Promise.all([store.latestVerification(id), store.latestReceipt(id)]);
      return { ...value, verification, receipt };
    },
);

export const VERIFY = defineRoute<SurfaceBDependencies, RefBody>(
  {
    method: "POST",
    url: "/verify",
    scope: "deciding",
    summary: "Verify a stored trust record again, and keep the verification",
    tag: "evidence",
    schema: { body: TransactionRef },
    answers: { 200: { description: "The verification: `VERIFIED`, or `FAILED` with why.", schema: Verification } },
    errors: ["TRUST_RECORD_NOT_FOUND", "RUNTIME_NOT_CONFIGURED", "REPLAY_STORE_UNAVAILABLE"],
  },
  ({ ctx, records }) =>
    async (request) => {
      const id = request.body.businessTransactionId;
      const store = required(records);
      const verification = verificationOf(
        id,
        checkRecord(await storedRecord(store, id), id, required(ctx.verifier)),
        new Date().toISOString(),
      );
      await store.appendVerification(id, verification);
      return verification;
    },
);

export const LATEST_VERIFICATION = defineRoute<SurfaceBDependencies, IdParams>(
  {
    method: "GET",
    url: "/verification/:id",
    scope: "deciding",
    summary: "The latest verification of a trust record",
    tag: "evidence",
    schema: { params: RecordParams },
    answers: { 200: { description: "The verification.", schema: Verification } },
    errors: ["VERIFICATION_NOT_FOUND", "RUNTIME_NOT_CONFIGURED"],
  },
  ({ records }) =>
    async (request) => {
      const id = request.params.id;
      const store = required(records);
      const latest = (await store.record(id)) === undefined ? undefined : await store.latestVerification(id);
      if (latest === undefined) throw SidecarHttpError.of("VERIFICATION_NOT_FOUND");
      return latest;
    },
);

export const RECEIPT = defineRoute<SurfaceBDependencies, RefBody>(
  {
    method: "POST",
    url: "/receipt",
    scope: "deciding",
    summary: "Issue a signed receipt for a trust record that verifies",
    tag: "evidence",
    schema: { body: TransactionRef },
    answers: { 200: { description: "The receipt.", schema: Receipt } },
    errors: ["TRUST_RECORD_NOT_FOUND", "TRUST_RECORD_INVALID", "RUNTIME_NOT_CONFIGURED", "REPLAY_STORE_UNAVAILABLE", "SIGNER_UNAVAILABLE"],
  },
  ({ ctx, records }) =>
    async (request) => {
      const id = request.body.businessTransactionId;
      const store = required(records);
      const check = checkRecord(await storedRecord(store, id), id, required(ctx.verifier));
      // A receipt vouches for the record it names: none is signed for a record that no longer verifies.
      if (!check.verified) throw SidecarHttpError.of("TRUST_RECORD_INVALID");
      const receipt = await issueReceipt(check.record, required(ctx.signer), new Date().toISOString());
      await store.appendReceipt(id, receipt);
      return receipt;
    },
);

export const LATEST_RECEIPT = defineRoute<SurfaceBDependencies, IdParams>(
  {
    method: "GET",
    url: "/receipt/latest/:id",
    scope: "deciding",
    summary: "The latest receipt of a trust record",
    tag: "evidence",
    schema: { params: RecordParams },
    answers: { 200: { description: "The receipt.", schema: Receipt } },
    errors: ["RECEIPT_NOT_FOUND", "RUNTIME_NOT_CONFIGURED"],
  },
  ({ records }) =>
    async (request) => {
      const id = request.params.id;
      const store = required(records);
      const latest = (await store.record(id)) === undefined ? undefined : await store.latestReceipt(id);
      if (latest === undefined) throw SidecarHttpError.of("RECEIPT_NOT_FOUND");
      return latest;
    },
);

export const REPLAY = defineRoute<SurfaceBDependencies, RefBody>(
  {
    method: "POST",
    url: "/replay",
    scope: "deciding",
    summary: "Check a stored record's signature again; nothing re-executed or stored",
    tag: "evidence",
    schema: { body: TransactionRef },
    answers: { 200: { description: "Whether the signature verifies.", schema: ReplayResult } },
    errors: ["TRUST_RECORD_NOT_FOUND", "RUNTIME_NOT_CONFIGURED"],
  },
  ({ ctx, records }) =>
    async (request): Promise<ReplayResult> => {
      const id = request.body.businessTransactionId;
      const stored = await storedRecord(required(records), id);
      // Spec 4.2: the signature only; nothing is reconstructed, re-executed or stored.
      const { verified, trustRecordHash } = checkSeal(stored, id, required(ctx.verifier));
      return { businessTransactionId: id, trustRecordHash, verified };
    },
);
