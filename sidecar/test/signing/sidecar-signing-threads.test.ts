/**
 * A sidecar signing on two threads (SERVICE_SIGNING_THREADS=2, docs/sidecar.md "Signing threads"): every signature it
 * issues (attestations, override records, execution proofs, Surface B's records and receipts, the record log's
 * checkpoints) verifies independently;
 * a thread that dies while holding requests answers them 503 SIGNER_UNAVAILABLE, with nothing consumed or recorded,
 * and the requests after it are signed by its replacement; `/metrics` shows the pool.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadPublicKeyPem, verifyCheckpoint } from "@writ/runtime";
import { createLogger, loadConfig, startSidecar, type RunningSidecar } from "@writ/sidecar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAYLOAD, TRANSFER, executedActionFor, independentlyVerifies, overrideOf, uid } from "../support/e2e.js";
import { fixturePoliciesRoot, TRANSFER_SIGNALS } from "../support/policies.js";
import { businessTransaction, publicKeyPem } from "../surface-b/support.js";

const API_KEY = "signing-threads-key-0123456789abcdef";
const TRUST_RECORD = "application/vnd.writ.trust-record.v1+json";
const RECEIPT = "application/vnd.writ.receipt.v1+json";
const CRASHING = new URL("./crashing-thread.ts", import.meta.url);

let dataDir: string;
let sidecar: RunningSidecar;
let pem: string;
const logged: string[] = [];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test asserts what it reads of an answer
async function call(surface: "a" | "b", method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${sidecar.urls[surface]}${path}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: (response.headers.get("content-type") ?? "").startsWith("application/json") ? JSON.parse(text) : text,
  };
}

const evaluate = (signals: object, executionId = uid("eval")) =>
  call("a", "POST", "/evaluate", { executionId, ...TRANSFER, verifiedSignals: signals });

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "writ-signing-threads-"));
  const config = loadConfig({
    SERVICE_API_KEY: API_KEY,
    SERVICE_POLICIES_ROOT: await fixturePoliciesRoot(),
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: "0",
    SERVICE_B_PORT: "0",
    SERVICE_LOG_LEVEL: "error",
    SERVICE_SIGNING_THREADS: "2",
  });
  const log = createLogger("error", { write: (line: string) => logged.push(line) });
  sidecar = await startSidecar(config, { signingThreadScript: CRASHING, log });
  pem = await publicKeyPem(dataDir);
});
afterAll(async () => {
  await sidecar?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("a sidecar signing on 2 threads", () => {
  it("says so at start-up, and its context holds the pool", () => {
    expect(sidecar.context.notices).toContain("signing and self-verifying on 2 threads (SERVICE_SIGNING_THREADS)");
    expect(sidecar.context.signingPool?.stats()).toMatchObject({ threads: 2, running: 2 });
  });

  it("signs attestations, override records and execution proofs that verify independently, many at once", async () => {
    const decided = await Promise.all(
      Array.from({ length: 20 }, (_, i) => evaluate(i % 2 === 0 ? TRANSFER_SIGNALS.approved : TRANSFER_SIGNALS.pending)),
    );
    for (const r of decided) {
      expect(r.status).toBe(200);
      expect(independentlyVerifies(PAYLOAD.attestation, r.body.attestation, pem)).toBe(true);
    }
    const pending = decided[1]!.body.attestation;
    const override = await call("a", "POST", "/override", overrideOf(pending.executionId, true));
    expect(override.status).toBe(200);
    expect(independentlyVerifies(PAYLOAD.override, override.body.record, pem)).toBe(true);
    const confirmed = await call("a", "POST", "/confirm-execution", { attestation: pending, executedAction: executedActionFor(pending) });
    expect(confirmed.status).toBe(200);
    expect(independentlyVerifies(PAYLOAD.executionProof, JSON.parse(confirmed.body.proof), pem)).toBe(true);
  });

  it("seals Surface B's trust records and receipts with signatures that verify independently", async () => {
    const record = await call("b", "POST", "/execute", businessTransaction());
    expect(record.status).toBe(200);
    const { verification: _v, receipt, ...sealed } = record.body;
    expect(independentlyVerifies(TRUST_RECORD, sealed, pem)).toBe(true);
    expect(independentlyVerifies(RECEIPT, receipt, pem)).toBe(true);
    const fresh = await call("b", "POST", "/receipt", { businessTransactionId: record.body.businessTransactionId });
    expect(fresh.status).toBe(200);
    expect(independentlyVerifies(RECEIPT, fresh.body, pem)).toBe(true);
  });

  it("signs the record log's checkpoints on its threads: an export's checkpoint is one more request to them, and verifies", async () => {
    await evaluate(TRANSFER_SIGNALS.approved);
    const signed = async (): Promise<number> =>
      Number(/^writ_signing_batch_requests_sum (\d+)$/m.exec((await call("a", "GET", "/metrics")).body as string)?.[1]);
    const before = await signed();
    const exported = await call("a", "GET", "/audit/export");
    expect(exported.status).toBe(200);
    expect(await signed()).toBe(before + 1);
    const lines = (exported.body as string)
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; checkpoint?: unknown });
    const checkpoint = lines.filter((line) => line.type === "checkpoint").at(-1)?.checkpoint;
    expect(verifyCheckpoint(checkpoint, [loadPublicKeyPem(pem)]).valid).toBe(true);
  });

  it("answers 503 for the requests a dying thread held, consumes nothing of them, and signs the next ones", async () => {
    const doomed = uid("crash-exit");
    const r = await evaluate(TRANSFER_SIGNALS.approved, doomed);
    expect(r).toEqual({ status: 503, body: { error: "signer unavailable" } });
    // Not consumed, not recorded: the audit trail has no decision for it.
    expect((await call("a", "GET", `/audit/decisions/${doomed}`)).status).toBe(404);
    expect(logged.join("\n")).toMatch(/signing thread \d+ stopped \(it exited with code 3\) holding \d+ requests, answered 503; replaced/);
    await expect.poll(() => sidecar.context.signingPool?.stats().running).toBe(2);
    const after = await Promise.all([evaluate(TRANSFER_SIGNALS.approved), evaluate(TRANSFER_SIGNALS.approved)]);
    for (const a of after) expect(independentlyVerifies(PAYLOAD.attestation, a.body.attestation, pem)).toBe(true);
    // Surface B fails closed the same way: no record is stored for a transaction whose seal's thread died (the cue is
    // in the authorization, which the record carries and the attestation does not).
    const lost = businessTransaction();
    const sealing = await call("b", "POST", "/execute", {
      ...lost,
      authorization: { ...(lost["authorization"] as object), purpose: "crash-throw" },
    });
    expect(sealing).toEqual({ status: 503, body: { error: "signer unavailable" } });
    expect((await call("b", "GET", `/trust-records/${lost.businessTransactionId}`)).status).toBe(404);
  });

  it("shows the pool on /metrics: its threads, queue, replacements and the time per batch", async () => {
    const metrics = (await call("a", "GET", "/metrics")).body as string;
    expect(metrics).toMatch(/^writ_signing_threads 2$/m);
    expect(metrics).toMatch(/^writ_signing_threads_running [12]$/m);
    expect(metrics).toMatch(/^writ_signing_queue 0$/m);
    expect(metrics).toMatch(/^writ_signing_threads_replaced_total 2$/m);
    const batches = Number(/^writ_signing_batch_duration_seconds_count (\d+)$/m.exec(metrics)?.[1]);
    expect(batches).toBeGreaterThan(0);
    expect(Number(/^writ_signing_batch_requests_sum (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(batches);
  });

  it("stops its threads when it closes", async () => {
    const pool = sidecar.context.signingPool!;
    await sidecar.close();
    expect(pool.stats()).toMatchObject({ running: 0, queued: 0, signing: 0 });
  });
});
