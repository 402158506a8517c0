/**
 * The synchronous pipeline of `POST /execute` and `POST /transactions` (spec 1.12): execute the transaction (evaluate
 * and sign, consuming the businessTransactionId as its executionId once and for all), seal the record, verify it, issue
 * its receipt, store all three in one write, and answer once that write is on disk. A refusal of the evaluation is
 * thrown before anything is stored: the id stays free to retry, except after INV-013, where it was already used.
 *
 * Where the record store offers it (`inOneTransaction`, PostgreSQL), the consumption of the id (with the decision's
 * audit record) and the record's write are one transaction: INVARIANT (no id consumed without its record), so a
 * fault that answers 503 leaves the id free or consumed with its record. Elsewhere (LMDB, memory) the replay store
 * commits the consumption before the record is written.
 */
import { Authorizer, endPhase, executionFingerprint, phaseStart, timedPhase, type DecisionReport } from "@writ/runtime";
import type { SidecarContext } from "../context.js";
import { SidecarHttpError } from "../http/errors.js";
import { checkSealed, verificationOf } from "./check.js";
import { required } from "./required.js";
import { issueReceipt, sealRecord } from "./seal.js";
import type { TrustRecordStore } from "../trust-records/record-store.js";
import type { BusinessTransaction, TrustRecord } from "../trust-records/types.js";
import { UnitReplayStore } from "./unit-replay.js";

/** Executes one transaction into its stored Trust Record; `report` as for `executeTransaction`. */
export type TransactionPipeline = (transaction: BusinessTransaction, report?: DecisionReport) => Promise<TrustRecord>;

/**
 * The pipeline of a Surface B on `records` (null: every execution answers 503). Made once: on a store with
 * `inOneTransaction`, with an authorizer of its own, the sidecar's in all but its replay store, which consumes in
 * each execution's transaction (unit-replay.ts).
 */
export function transactionPipeline(ctx: SidecarContext, records: TrustRecordStore | null): TransactionPipeline {
  const inOneTransaction = records?.inOneTransaction;
  if (records === null || inOneTransaction === undefined)
    return (transaction, report) => executeTransaction(ctx, ctx.authorizer, required(records), transaction, report);
  const units = new UnitReplayStore();
  const authorizer = new Authorizer({ ...ctx.authorizer.options, store: units });
  return (transaction, report) => {
    const fingerprint = executionFingerprint(transaction.businessTransactionId);
    return inOneTransaction((unit) =>
      units.run(fingerprint, unit.replay, () => executeTransaction(ctx, authorizer, unit, transaction, report)),
    );
  };
}

/**
 * `report`: the runtime's phases of the execution, then the pipeline's own: `sign` (the seal), `verify` (the record),
 * `sign` (the receipt) and `write` (the record, its verification and receipt).
 */
async function executeTransaction(
  ctx: SidecarContext,
  authorizer: Authorizer,
  store: Pick<TrustRecordStore, "create">,
  transaction: BusinessTransaction,
  report?: DecisionReport,
): Promise<TrustRecord> {
  // Checked before the evaluation, which would consume the id for an execution that could not be recorded.
  const signer = required(ctx.signer);
  const id = transaction.businessTransactionId;
  const execution = await authorizer.evaluate(
    { executionId: id, policyId: transaction.policy.name, policyVersion: transaction.policy.version, signals: transaction.signals },
    report,
  );

  const sealing = phaseStart(report);
  const record = await sealRecord(transaction, execution, signer);
  const verifying = endPhase(report, "sign", sealing);
  const check = checkSealed(record, id);
  const issuing = endPhase(report, "verify", verifying);
  // What was just sealed agrees with itself (check.ts `checkSealed`): a failure here is a fault, not the client's.
  if (!check.verified) throw new Error(`a freshly sealed trust record does not verify: ${check.problems.join("; ")}`);
  const now = new Date().toISOString();
  const verification = verificationOf(id, check, now);
  const receipt = await issueReceipt(record, signer, now);
  const writing = endPhase(report, "sign", issuing);
  // Only a store that outlived its replay entries (the development memory store after a restart) gets this far
  // with an id that already has a record: the record is never replaced, and the id counts as consumed.
  if (!(await timedPhase(report, "write", writing, store.create(record, verification, receipt)))) throw SidecarHttpError.of("INV-013");
  return { ...record, verification, receipt };
}
