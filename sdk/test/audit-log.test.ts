/**
 * The tamper-evident audit record log through the SDK, against a real listening sidecar: the log's state and
 * checkpoints, an inclusion proof and a consistency proof that verify offline with the pinned key only, and the
 * streamed export that `verifyAuditExport` checks whole; an export changed in transit is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WritApiError, verifyAuditExport, verifyConsistencyProof, verifyInclusionProof, type SignedCheckpoint } from "@writ/sdk";
import { TRANSFER, TRANSFER_SIGNALS, startSidecar, uid, type Running } from "./support.js";

let s: Running;
beforeAll(async () => {
  s = await startSidecar({ SERVICE_AUDIT_CHECKPOINT_INTERVAL_MS: "200" });
});
afterAll(async () => {
  await s.close();
});

async function collect(lines: AsyncIterable<unknown>): Promise<unknown[]> {
  const all: unknown[] = [];
  for await (const line of lines) all.push(line);
  return all;
}

/** Polls until the log's latest checkpoint covers more than `size` entries (checkpoints come every 200 ms here). */
async function checkpointAfter(size: number): Promise<SignedCheckpoint> {
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    const { latest } = await s.a.auditLog();
    if (latest !== null && latest.size > size) return latest;
  }
  throw new Error(`no checkpoint past ${size} within 5 s`);
}

describe("the audit record log through the SDK", () => {
  it("proves a decision's inclusion and the log's consistency, verified against the pinned key alone", async () => {
    const executionId = uid("logged");
    await s.a.evaluate({ executionId, ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved });
    const first = await checkpointAfter(0);
    const { logIds } = await s.a.auditLogs();
    expect(logIds).toEqual([first.logId]);
    expect(await s.a.auditCheckpoint(first.size)).toEqual(first);

    const proof = await s.a.inclusionProof(executionId);
    expect(proof.logId).toBe(first.logId);
    expect(verifyInclusionProof(proof, s.publicKeyPem)).toEqual({ valid: true, errors: [] });

    await s.a.evaluate({ executionId: uid("later"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.pending });
    const later = await checkpointAfter(first.size);
    expect((await s.a.auditCheckpoints({ from: first.size })).map((c) => c.size)).toContain(later.size);
    expect(verifyConsistencyProof(await s.a.consistencyProof(first.size, later.size), s.publicKeyPem)).toEqual({ valid: true, errors: [] });
    // Another key pinned: nothing verifies.
    const other = (await import("node:crypto")).generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }).toString();
    expect(verifyInclusionProof(proof, other).valid).toBe(false);
  });

  it("streams the export, which verifies whole; a changed record is named", async () => {
    await s.a.evaluate({ executionId: uid("exported"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.rejected });
    const lines = await collect(s.a.auditExport());
    const report = await verifyAuditExport(lines, s.publicKeyPem);
    expect(report).toMatchObject({ valid: true, failures: [] });
    expect(report.attestations).toBeGreaterThanOrEqual(1);

    const index = lines.findIndex((l) => (l as { kind?: string }).kind === "decision");
    const changed = lines.map((l, i) =>
      i === index ? { ...(l as object), record: (l as { record: string }).record.replace('"status":"', '"status":"x') } : l,
    );
    const refused = await verifyAuditExport(changed, s.publicKeyPem);
    expect(refused.valid).toBe(false);
    expect(refused.failures[0]).toMatchObject({ line: index + 1, position: (lines[index] as { position: number }).position });
  });

  it("answers a log the store does not hold with the error table's 404", async () => {
    await expect(s.a.auditLog("no-such-log")).rejects.toMatchObject({ status: 404, body: { error: "audit log not found" } });
    await expect(collect(s.a.auditExport({ logId: "no-such-log" }))).rejects.toBeInstanceOf(WritApiError);
  });
});
