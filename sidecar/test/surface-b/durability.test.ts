/**
 * What Surface B stores is on disk (docs/surface-b.md): a trust record, its verification history and its
 * receipts survive a restart on the same data dir; and a record changed on disk while the sidecar is stopped is
 * reported by `POST /verify` (status FAILED, kept in the history) and `POST /replay` (verified false), never a 500,
 * and gets no new receipt.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sha256OfJcs } from "../support/e2e.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import type { Receipt, ReplayResult, TrustRecord, Verification } from "@writ/sidecar";
import { businessTransaction, startSurfaceB, tamperRecord, without, withDatabase, type Json, type SurfaceB } from "./support.js";

/** Every stored entry of `id` in a history database, oldest first, read straight from LMDB. */
async function history(dataDir: string, name: string, id: string): Promise<Json[]> {
  return withDatabase(dataDir, name, (db) =>
    [...db.getRange({ start: [id, 0], end: [id, Number.MAX_SAFE_INTEGER] })].map((e) => JSON.parse(e.value as string) as Json),
  );
}

describe("a restart on the same data dir", () => {
  let b: SurfaceB;
  afterAll(async () => {
    await b.close();
  });

  it("keeps the trust record, its verification history and its receipts", async () => {
    b = await startSurfaceB();
    const dataDir = b.dataDir;
    const record = (await b.call<TrustRecord>("POST", "/execute", businessTransaction())).body;
    const id = record.businessTransactionId;
    const verifications = [record.verification];
    const receipts = [record.receipt];
    for (let i = 0; i < 2; i++) {
      verifications.push((await b.call<Verification>("POST", "/verify", { businessTransactionId: id })).body);
      receipts.push((await b.call<Receipt>("POST", "/receipt", { businessTransactionId: id })).body);
    }
    const submitted = (
      await b.call<TrustRecord>("POST", "/transactions", {
        businessTransactionId: "restart-1",
        policy: record.policy,
        signals: TRANSFER_SIGNALS.rejected,
      })
    ).body;
    const full = (await b.call<TrustRecord>("GET", `/trust-records/${id}`)).body;
    await b.stop();

    expect(await history(dataDir, "surface-b-verifications", id)).toEqual(verifications);
    expect(await history(dataDir, "surface-b-receipts", id)).toEqual(receipts);

    b = await startSurfaceB({ dataDir });
    expect((await b.call("GET", `/trust-records/${id}`)).body).toEqual({
      ...without(record, "verification", "receipt"),
      verification: verifications[2],
      receipt: receipts[2],
    });
    expect((await b.call("GET", `/trust-records/${id}`)).body).toEqual(full);
    expect((await b.call("GET", `/verification/${id}`)).body).toEqual(verifications[2]);
    expect((await b.call("GET", `/receipt/latest/${id}`)).body).toEqual(receipts[2]);
    expect((await b.call("GET", "/trust-records/restart-1")).body).toEqual(submitted);
    expect((await b.call("GET", "/transactions")).body).toMatchObject({
      total: 2,
      items: [{ businessTransactionId: id }, { businessTransactionId: "restart-1" }],
    });
    // Still verifiable after the restart, and still consumed: the replay store is in the same environment.
    expect((await b.call<Verification>("POST", "/verify", { businessTransactionId: id })).body.status).toBe("VERIFIED");
    expect((await b.call("POST", "/replay", { businessTransactionId: id })).body).toEqual({
      businessTransactionId: id,
      trustRecordHash: record.trustRecordHash,
      verified: true,
    });
    expect((await b.call("POST", "/execute", { ...businessTransaction(), businessTransactionId: id })).status).toBe(422);
  });
});

describe("a record changed on disk while the sidecar is stopped", () => {
  let b: SurfaceB;
  let dataDir: string;
  const ids: Record<string, string> = {};
  const hashes: Record<string, string> = {};
  const TAMPERINGS: Record<string, (record: Json) => unknown> = {
    amount: (r) => ({ ...r, signals: { ...(r["signals"] as Json), amount: 1_000_000 } }),
    status: (r) => ({ ...r, status: "APPROVED" }),
    decision: (r) => ({ ...r, execution: { ...(r["execution"] as Json), status: "rejected" } }),
    policy: (r) => ({ ...r, policy: { ...(r["policy"] as Json), version: "1.1.0" } }),
    hash: (r) => ({ ...r, trustRecordHash: "0".repeat(64) }),
    signature: (r) => ({ ...r, signature: `${"A".repeat(86)}==` }),
    signer: (r) => ({ ...r, signerKeyId: "someone-else" }),
    removed: (r) => without(r, "execution"),
    attestation: (r) => ({
      ...r,
      execution: { ...(r["execution"] as Json), attestation: { executionId: [], decision: null, provenance: 5, signature: 7 } },
    }),
    signals: (r) => ({ ...r, signals: null, policy: "none" }),
    added: (r) => ({ ...r, note: "added later" }),
    id: (r) => ({ ...r, businessTransactionId: "another-id" }),
    array: () => [1, 2, 3],
    bytes: () => "{not json",
  };

  beforeAll(async () => {
    b = await startSurfaceB();
    dataDir = b.dataDir;
    for (const name of [...Object.keys(TAMPERINGS), "untouched"]) {
      const record = (await b.call<TrustRecord>("POST", "/execute", businessTransaction())).body;
      ids[name] = record.businessTransactionId;
      hashes[name] = record.trustRecordHash;
    }
    await b.stop();
    for (const [name, change] of Object.entries(TAMPERINGS)) await tamperRecord(dataDir, ids[name]!, change);
    b = await startSurfaceB({ dataDir });
  });
  afterAll(async () => {
    await b.close();
  });
  afterEach(async () => {
    expect((await b.call("GET", "/health")).body).toEqual({ status: "UP" });
  });

  it.each(Object.keys(TAMPERINGS))(
    "changed %s: POST /verify answers 200 FAILED with what failed, and keeps it as the latest",
    async (name) => {
      const id = ids[name]!;
      const r = await b.call<Verification>("POST", "/verify", { businessTransactionId: id });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ businessTransactionId: id, status: "FAILED", message: expect.any(String) });
      expect(r.body.message).not.toBe("");
      // The hash is recomputed from the content, which the `hash` and `signature` members are not part of.
      if (name === "hash" || name === "signature") expect(r.body.trustRecordHash).toBe(hashes[name]);
      else expect(r.body.trustRecordHash).not.toBe(hashes[name]);
      expect((await b.call("GET", `/verification/${id}`)).body).toEqual(r.body);
    },
  );

  it.each(Object.keys(TAMPERINGS))("changed %s: POST /replay answers 200 verified false", async (name) => {
    const id = ids[name]!;
    const r = await b.call<ReplayResult>("POST", "/replay", { businessTransactionId: id });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ businessTransactionId: id, verified: false });
    expect(r.body.trustRecordHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each(Object.keys(TAMPERINGS))("changed %s: POST /receipt signs nothing (409), the latest receipt is unchanged", async (name) => {
    const id = ids[name]!;
    const before = (await b.call("GET", `/receipt/latest/${id}`)).body;
    const r = await b.call("POST", "/receipt", { businessTransactionId: id });
    expect({ status: r.status, body: r.body }).toEqual({ status: 409, body: { error: "trust record does not verify: no receipt issued" } });
    expect((await b.call("GET", `/receipt/latest/${id}`)).body).toEqual(before);
  });

  it("the messages name the failed check", async () => {
    const message = async (name: string) =>
      (await b.call<Verification>("POST", "/verify", { businessTransactionId: ids[name] })).body.message;
    expect(await message("amount")).toContain("the record signature does not verify");
    expect(await message("amount")).toContain("attestation signalsHash does not match the signals");
    expect(await message("hash")).toBe(
      "the record signature does not verify: the record was changed after it was sealed; trustRecordHash does not match the record's content",
    );
    expect(await message("signer")).toContain("signer key `someone-else` is not in the trust root");
    expect(await message("removed")).toContain("the record has no execution attestation");
    expect(await message("id")).toContain("is not the record of that id");
    expect(await message("array")).toBe("the stored record is not a JSON object");
    expect(await message("bytes")).toBe("the stored record is not valid JSON");
  });

  it("the replay hash is recomputed from the stored content", async () => {
    const r = await b.call<ReplayResult>("POST", "/replay", { businessTransactionId: ids["array"] });
    expect(r.body.trustRecordHash).toBe(sha256OfJcs([1, 2, 3]));
  });

  it("an untouched record beside them still verifies", async () => {
    const id = ids["untouched"]!;
    expect((await b.call<Verification>("POST", "/verify", { businessTransactionId: id })).body.status).toBe("VERIFIED");
    expect((await b.call("POST", "/replay", { businessTransactionId: id })).body).toEqual({
      businessTransactionId: id,
      trustRecordHash: hashes["untouched"],
      verified: true,
    });
    expect((await b.call("POST", "/receipt", { businessTransactionId: id })).status).toBe(200);
  });
});
