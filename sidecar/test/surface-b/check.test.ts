/**
 * INVARIANT (a freshly sealed record verifies): the pipeline checks what it has just sealed with `checkSealed`, which
 * does not verify again the signatures self-verified when signed. Every record it seals must pass the full check
 * (`checkRecord`, what `POST /verify` runs on the stored record) alike; and `checkSealed` must still find what
 * construction could get wrong.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPublicKeyPem } from "@writ/runtime";
import type { TrustRecord } from "@writ/sidecar";
import { checkRecord, checkSealed } from "../../src/surface-b/check.js";
import type { SealedRecord } from "../../src/trust-records/types.js";
import { offlineVerifier } from "../support/e2e.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { businessTransaction, publicKeyPem, startSurfaceB, without, type SurfaceB } from "./support.js";

let b: SurfaceB;
let pem: string;
const sealed: SealedRecord[] = [];
beforeAll(async () => {
  b = await startSurfaceB();
  pem = await publicKeyPem(b.dataDir);
  for (const signals of Object.values(TRANSFER_SIGNALS)) {
    const record = (await b.call<TrustRecord>("POST", "/execute", businessTransaction({ signals: { ...signals } }))).body;
    sealed.push(without(record, "verification", "receipt") as unknown as SealedRecord);
  }
});
afterAll(async () => {
  await b.close();
});

const verifierOf = (record: SealedRecord) => offlineVerifier(loadPublicKeyPem(pem), record.trustRootVersion);

describe("checkSealed", () => {
  it("verifies every record the pipeline sealed, approved, pending or rejected, as the full check does", () => {
    for (const record of sealed) {
      const id = record.businessTransactionId;
      const full = checkRecord({ state: "stored", value: record }, id, verifierOf(record));
      expect(full).toEqual({ verified: true, trustRecordHash: record.trustRecordHash, record });
      expect(checkSealed(record, id)).toEqual(full);
    }
  });

  it.each([
    ["another id", (r: SealedRecord) => r, "other-id", /is not its record/],
    ["signals the attestation did not decide", (r: SealedRecord) => ({ ...r, signals: { ...r.signals, amount: 1 } }), null, /signalsHash/],
    ["another policy version", (r: SealedRecord) => ({ ...r, policy: { ...r.policy, version: "9.9.9" } }), null, /another policy version/],
    ["another status", (r: SealedRecord) => ({ ...r, execution: { ...r.execution, status: "rejected" } }), null, /execution status/],
  ] as const)("finds a record with %s", (_, change, otherId, problem) => {
    const record = change(sealed[0]!) as SealedRecord;
    const check = checkSealed(record, otherId ?? record.businessTransactionId);
    expect(check.verified).toBe(false);
    expect(check.verified ? "" : check.problems.join("; ")).toMatch(problem);
  });
});
