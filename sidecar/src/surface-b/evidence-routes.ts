/**
 * The evidence of a stored transaction (spec 4.2): the whole Execution Trust Record, a fresh verification (kept in
 * the record's history) and the latest one, a new receipt and the latest one, and the signature-only replay check.
 * Every new verification or receipt is on disk before it is answered.
 */
import type { FastifyInstance } from "fastify";
import { TransactionRef } from "@writ/wire";
import type { SidecarContext } from "../context.js";
import { SidecarHttpError } from "../http/errors.js";
import { bodySchema } from "../http/validation.js";
import { checkRecord, checkSeal, verificationOf } from "./check.js";
import { required } from "./required.js";
import { RECORD_ROUTE } from "./route-options.js";
import { issueReceipt } from "./seal.js";
import type { StoredRecord, TrustRecordStore } from "./record-store.js";
import type { ReplayResult } from "./types.js";

type IdParams = { Params: { id: string } };
type RefBody = { Body: TransactionRef };
const REF = bodySchema(TransactionRef);

async function storedRecord(store: TrustRecordStore, id: string): Promise<StoredRecord> {
  const stored = await store.record(id);
  if (stored === undefined) throw SidecarHttpError.of("TRUST_RECORD_NOT_FOUND");
  return stored;
}

export function evidenceRoutes(app: FastifyInstance, ctx: SidecarContext, records: TrustRecordStore | null): void {
  app.get<IdParams>("/trust-records/:id", RECORD_ROUTE, async (request) => {
    const id = request.params.id;
    const store = required(records);
    const stored = await storedRecord(store, id);
    if (stored.state === "unreadable") throw new Error(`the stored record of \`${id}\` is not valid JSON`);
    const value = stored.value;
    // A record changed on disk into something else than an object is shown as it is stored.
    if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
    const [verification, receipt] = await Promise.all([store.latestVerification(id), store.latestReceipt(id)]);
    return { ...value, verification, receipt };
  });

  app.post<RefBody>("/verify", REF, async (request) => {
    const id = request.body.businessTransactionId;
    const store = required(records);
    const verification = verificationOf(
      id,
      checkRecord(await storedRecord(store, id), id, required(ctx.verifier)),
      new Date().toISOString(),
    );
    await store.appendVerification(id, verification);
    return verification;
  });

  app.get<IdParams>("/verification/:id", RECORD_ROUTE, async (request) => {
    const id = request.params.id;
    const store = required(records);
    const latest = (await store.record(id)) === undefined ? undefined : await store.latestVerification(id);
    if (latest === undefined) throw SidecarHttpError.of("VERIFICATION_NOT_FOUND");
    return latest;
  });

  app.post<RefBody>("/receipt", REF, async (request) => {
    const id = request.body.businessTransactionId;
    const store = required(records);
    const check = checkRecord(await storedRecord(store, id), id, required(ctx.verifier));
    // A receipt vouches for the record it names: none is signed for a record that no longer verifies.
    if (!check.verified) throw SidecarHttpError.of("TRUST_RECORD_INVALID");
    const receipt = await issueReceipt(check.record, required(ctx.signer), new Date().toISOString());
    await store.appendReceipt(id, receipt);
    return receipt;
  });

  app.get<IdParams>("/receipt/latest/:id", RECORD_ROUTE, async (request) => {
    const id = request.params.id;
    const store = required(records);
    const latest = (await store.record(id)) === undefined ? undefined : await store.latestReceipt(id);
    if (latest === undefined) throw SidecarHttpError.of("RECEIPT_NOT_FOUND");
    return latest;
  });

  app.post<RefBody>("/replay", REF, async (request): Promise<ReplayResult> => {
    const id = request.body.businessTransactionId;
    const stored = await storedRecord(required(records), id);
    // Spec 4.2: the signature only; nothing is reconstructed, re-executed or stored.
    const { verified, trustRecordHash } = checkSeal(stored, id, required(ctx.verifier).trustRoot);
    return { businessTransactionId: id, trustRecordHash, verified };
  });
}
