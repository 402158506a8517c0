/**
 * The tamper-evident audit record log over HTTP (docs/audit.md, "Tamper evidence"), on a real sidecar with
 * real signed decisions: checkpoints listed and fetched, an inclusion proof of a decision and a consistency proof
 * between checkpoints that verify against the signing key alone, and the streamed export that verifies whole,
 * embedded attestation signatures included.
 */
import { createPublicKey, randomUUID } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ExportVerifier,
  createTrustRoot,
  decisionAttestationSigned,
  loadPublicKeyPem,
  verifyConsistencyProof,
  verifyInclusionProof,
  type PublicKey,
  type SignedCheckpoint,
} from "@writ/runtime";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { API_KEY, startTestSidecar, type TestSidecar } from "../support/sidecar.js";

const CLI = new URL("../../../compiler/dist/cli.js", import.meta.url).pathname;
let s: TestSidecar;
let key: PublicKey;
let publicKeyPem: string;

const evaluate = (signals: Record<string, unknown>) =>
  s.call("POST", "/evaluate", {
    executionId: randomUUID(),
    policyId: "conformance.transfer",
    policyVersion: "1.0.0",
    verifiedSignals: signals,
  });

async function until<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  for (const deadline = Date.now() + 5_000; ;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`${what} within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  s = await startTestSidecar({ SERVICE_AUDIT_CHECKPOINT_INTERVAL_MS: "200" });
  publicKeyPem = createPublicKey(await readFile(join(s.dataDir, "signing.key"), "utf8"))
    .export({ type: "spki", format: "pem" })
    .toString();
  key = loadPublicKeyPem(publicKeyPem);
});
afterAll(() => s.close());

describe("the audit record log over HTTP", () => {
  it("proves a decision's inclusion and the log's consistency against the signing key alone", async () => {
    const first = (await evaluate(TRANSFER_SIGNALS.approved)).body;
    const checkpoint = await until("a checkpoint covering the decision", async () => {
      const r = await s.call("GET", `/audit/proofs/inclusion?executionId=${encodeURIComponent(first.attestation.executionId)}`);
      return r.status === 200 ? (r.body as { checkpoint: SignedCheckpoint }) : null;
    });
    expect(verifyInclusionProof(checkpoint as never, [key])).toMatchObject({ valid: true });
    const health = (await s.call("GET", "/health")).body;
    expect(checkpoint.checkpoint.logId).toBe(health.instanceId);

    await evaluate(TRANSFER_SIGNALS.pending);
    await evaluate(TRANSFER_SIGNALS.rejected);
    const later = await until("a later checkpoint", async () => {
      const latest = (await s.call("GET", "/audit/log")).body.latest as SignedCheckpoint | null;
      return latest !== null && latest.size > checkpoint.checkpoint.size ? latest : null;
    });
    const listed = (await s.call("GET", "/audit/checkpoints")).body as SignedCheckpoint[];
    expect(listed.map((c) => c.size)).toContain(later.size);
    expect((await s.call("GET", `/audit/checkpoints/${later.size}`)).body).toEqual(later);
    const consistency = await s.call("GET", `/audit/proofs/consistency?from=${checkpoint.checkpoint.size}&to=${later.size}`);
    expect(verifyConsistencyProof(consistency.body, [key])).toMatchObject({ valid: true });
  });

  it("streams an export that verifies whole, every attestation signature included", async () => {
    for (const signals of [TRANSFER_SIGNALS.approved, TRANSFER_SIGNALS.pending]) await evaluate(signals);
    await s.call("POST", "/verify", (await evaluate(TRANSFER_SIGNALS.approved)).body.attestation);
    const response = await fetch(`${s.url}/audit/export`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(response.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const lines = (await response.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as unknown);
    const verifier = new ExportVerifier([key], decisionAttestationSigned(createTrustRoot("check", [key])));
    for (const line of lines) verifier.add(line);
    const report = verifier.finish();
    expect(report.failures).toEqual([]);
    expect(report).toMatchObject({ valid: true, logId: (await s.call("GET", "/health")).body.instanceId });
    expect(report.attestations).toBeGreaterThanOrEqual(6);
    expect(report.latest?.size).toBe(report.entries);
  });

  it("a decision record that does not state what its attestation signs fails the record check of `writ audit verify`", async () => {
    // Records forged into the trail before the log took them in: their leaves hash the forged bodies, so only the check
    // of each decision against its own attestation can tell.
    const check = decisionAttestationSigned(createTrustRoot("check", [key]));
    const approved = (await evaluate(TRANSFER_SIGNALS.approved)).body.attestation;
    const pending = (await evaluate(TRANSFER_SIGNALS.pending)).body.attestation;
    // The decision records as the export carries them, logged or not yet.
    const exported = await (await fetch(`${s.url}/audit/export`, { headers: { authorization: `Bearer ${API_KEY}` } })).text();
    const stored = exported
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind?: string; record?: string })
      .flatMap((line) =>
        line.kind === "decision" && line.record !== undefined ? [JSON.parse(line.record) as Record<string, unknown>] : [],
      );
    const records = [approved, pending].map((attestation: { executionId: string }) =>
      stored.find((r) => r["executionId"] === attestation.executionId)!,
    );
    expect(records.map((r) => r["status"])).toEqual(["approved", "pending_override"]);
    for (const record of records) expect(check("decision", record)).toBeNull();
    const [a, p] = records as [Record<string, unknown>, Record<string, unknown>];
    expect(check("decision", { ...a, status: "rejected" })).toBe("its status is not its attestation's verdict (approved)");
    expect(check("decision", { ...p, status: "approved" })).toBe("its status is not its attestation's verdict (pending_override)");
    expect(check("decision", { ...a, executionId: p["executionId"] })).toBe("its executionId is not its attestation's");
    expect(check("decision", { ...a, attestation: p["attestation"] })).toBe("its executionId is not its attestation's");
    expect(check("decision", { ...p, attestation: { ...(p["attestation"] as object), executionId: a["executionId"] } })).toBe(
      "its attestation's signature does not verify against the pinned keys",
    );
  });

  it("`writ audit verify` verifies the export and a proof offline, and names the line and position of a changed record", async () => {
    await evaluate(TRANSFER_SIGNALS.pending);
    const dir = await mkdtemp(join(tmpdir(), "writ-audit-verify-"));
    try {
      await writeFile(join(dir, "sidecar.pub"), publicKeyPem);
      const exported = await (await fetch(`${s.url}/audit/export`, { headers: { authorization: `Bearer ${API_KEY}` } })).text();
      await writeFile(join(dir, "export.ndjson"), exported);
      const writ = (...args: string[]) =>
        spawnSync(process.execPath, [CLI, "audit", "verify", ...args, "--key", "sidecar.pub"], { cwd: dir, encoding: "utf8" });
      const verified = writ("export.ndjson");
      expect(verified.status, verified.stdout + verified.stderr).toBe(0);
      expect(verified.stdout).toMatch(
        /^audit log [0-9a-f-]{36}: verified: \d+ entries \(0 removed by retention\), \d+ checkpoints, \d+ attestations; latest checkpoint: size \d+/,
      );

      // One decision's reason changed in the export (as it would be in a store edited behind the log).
      const lines = exported.trim().split("\n");
      const index = lines.findIndex((line) => line.includes('"kind":"decision"'));
      lines[index] = lines[index]!.replace("verified customer", "VERIFIED customer");
      await writeFile(join(dir, "tampered.ndjson"), `${lines.join("\n")}\n`);
      const refused = writ("tampered.ndjson");
      expect(refused.status).toBe(5);
      const position = (JSON.parse(lines[index]!) as { position: number }).position;
      expect(refused.stdout).toContain(
        `NOT verified: line ${index + 1}, position ${position}: the decision record at position ${position} is not the one logged there`,
      );

      const executionId = (JSON.parse((JSON.parse(lines[index]!) as { record: string }).record) as { executionId: string }).executionId;
      const proof = await s.call("GET", `/audit/proofs/inclusion?executionId=${encodeURIComponent(executionId)}`);
      await writeFile(join(dir, "proof.json"), JSON.stringify(proof.body));
      expect(writ("--proof", "proof.json")).toMatchObject({ status: 0, stdout: "inclusion proof: verified\n" });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("answers bad or unknown parameters with the table's errors", async () => {
    expect(await s.call("GET", "/audit/checkpoints/999999")).toMatchObject({ status: 404, body: { error: "checkpoint not found" } });
    expect(await s.call("GET", "/audit/proofs/inclusion?executionId=never-decided")).toMatchObject({
      status: 404,
      body: { error: "record not covered by the checkpoint" },
    });
    expect((await s.call("GET", "/audit/proofs/inclusion")).status).toBe(400);
    expect((await s.call("GET", "/audit/proofs/consistency?from=5&to=1")).status).toBe(400);
    expect((await s.call("GET", "/audit/export?from=-1")).status).toBe(400);
    expect((await fetch(`${s.url}/audit/export`)).status).toBe(401);
    const invalid = (message: string) => ({ status: 400, body: { error: "Invalid request", details: [{ path: "querystring", message }] } });
    expect(await s.call("GET", "/audit/log?size=1")).toMatchObject(invalid("querystring/size is not a known parameter; known: logId"));
    expect(await s.call("GET", "/audit/checkpoints?logId=a%20b")).toMatchObject(
      invalid('querystring/logId must match pattern "^[A-Za-z0-9._:-]{1,128}$"'),
    );
    expect(await s.call("GET", "/audit/log?logId=a&logId=b")).toMatchObject(invalid("querystring/logId must be given once"));
  });

  it("lists its one log, reads it by logId, and answers 404 for a log it does not hold", async () => {
    const { instanceId } = (await s.call("GET", "/health")).body as { instanceId: string };
    expect(await s.call("GET", "/audit/logs")).toMatchObject({ status: 200, body: { logIds: [instanceId] } });
    // The same log, read by its id: its size moves only forward between the reads around it (sequencing runs meanwhile).
    type LogState = { logId: string; size: number };
    const before = (await s.call("GET", "/audit/log")).body as LogState;
    const byId = (await s.call("GET", `/audit/log?logId=${instanceId}`)).body as LogState;
    const after = (await s.call("GET", "/audit/log")).body as LogState;
    expect(byId.logId).toBe(instanceId);
    expect(byId.size).toBeGreaterThanOrEqual(before.size);
    expect(byId.size).toBeLessThanOrEqual(after.size);
    for (const path of ["/audit/log?logId=other", "/audit/checkpoints?logId=other", "/audit/export?logId=other"]) {
      expect(await s.call("GET", path), path).toMatchObject({ status: 404, body: { error: "audit log not found" } });
    }
    expect(await s.call("GET", "/audit/checkpoints/1?logId=other")).toMatchObject({ status: 404, body: { error: "checkpoint not found" } });
  });
});
