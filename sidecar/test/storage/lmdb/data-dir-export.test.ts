/**
 * `openLmdbDataDir` (storage/lmdb/data-dir-export.ts): a data dir read as plain rows for `import-lmdb`; a database the
 * sidecar never created answers no rows, Trust Records come in creation order, and the data dir is never changed.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LmdbBundlePins } from "../../../src/storage/lmdb/bundle-pins.js";
import { openLmdbDataDir, type LmdbDataDirExport } from "../../../src/storage/lmdb/data-dir-export.js";
import { LmdbTrustRecordStore } from "../../../src/storage/lmdb/record-store.js";
import { receiptOf, recordOf, verificationOf } from "../../surface-b/record-store-contract.js";

/** Every row of every kind, by kind. */
function everything(data: LmdbDataDirExport): Record<string, unknown[]> {
  return {
    replay: [...data.replayEntries()],
    decisions: [...data.decisions()],
    overrides: [...data.overrides()],
    confirmations: [...data.confirmations()],
    verifications: [...data.verifications()],
    security: [...data.securityEvents()],
    trustRecords: [...data.trustRecords()],
    trustVerifications: [...data.trustHistory("verification")],
    trustReceipts: [...data.trustHistory("receipt")],
    bundlePins: [...data.bundlePins()],
    counters: [...data.counters()],
  };
}

describe("reading an LMDB data dir for import-lmdb", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-export-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("answers no rows for the databases a sidecar never created", async () => {
    await open({ path: dir, maxDbs: 32, noSubdir: false }).close();
    const data = openLmdbDataDir(dir);
    try {
      expect(Object.values(everything(data)).every((rows) => rows.length === 0)).toBe(true);
    } finally {
      await data.close();
    }
  });

  it("answers Trust Records in creation order with their history, and pins by policy and version, changing nothing", async () => {
    const root = open({ path: dir, maxDbs: 32, noSubdir: false });
    const trust = new LmdbTrustRecordStore(root);
    // Created out of their ids' order: the export follows creation.
    for (const [i, id] of ["tx-b", "tx-a"].entries())
      expect(await trust.create(recordOf(id, i), verificationOf(id, 0), receiptOf(id, 0))).toBe(true);
    await trust.appendReceipt("tx-b", receiptOf("tx-b", 1));
    const pins = new LmdbBundlePins(root);
    await pins.claim("payments", "1.0.0", "1".repeat(64));
    await pins.claim("refunds", "2.0.0-rc.1", "2".repeat(64));
    await root.close();
    const before = await readFile(join(dir, "data.mdb"));

    const data = openLmdbDataDir(dir);
    try {
      const rows = everything(data);
      expect(rows.trustRecords).toEqual([
        { id: "tx-b", body: JSON.stringify(recordOf("tx-b", 0)) },
        { id: "tx-a", body: JSON.stringify(recordOf("tx-a", 1)) },
      ]);
      expect(rows.trustVerifications).toEqual([
        { id: "tx-a", kind: "verification", body: JSON.stringify(verificationOf("tx-a", 0)) },
        { id: "tx-b", kind: "verification", body: JSON.stringify(verificationOf("tx-b", 0)) },
      ]);
      expect(rows.trustReceipts).toEqual([
        { id: "tx-a", kind: "receipt", body: JSON.stringify(receiptOf("tx-a", 0)) },
        { id: "tx-b", kind: "receipt", body: JSON.stringify(receiptOf("tx-b", 0)) },
        { id: "tx-b", kind: "receipt", body: JSON.stringify(receiptOf("tx-b", 1)) },
      ]);
      expect(rows.bundlePins).toEqual([
        { policyId: "payments", version: "1.0.0", bundleHash: "1".repeat(64) },
        { policyId: "refunds", version: "2.0.0-rc.1", bundleHash: "2".repeat(64) },
      ]);
      expect(rows.replay).toEqual([]);
    } finally {
      await data.close();
    }
    expect((await readFile(join(dir, "data.mdb"))).equals(before)).toBe(true);
  });
});
