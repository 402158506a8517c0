/**
 * The tamper-evident record log of the LMDB trail (issue 15; docs/audit.md, "Tamper evidence"): every kind of record
 * is sequenced and covered by signed, chained checkpoints; inclusion and consistency proofs verify with the runtime's
 * verifiers; the export recomputes every checkpoint's root; an edited record, a removed one or a retention prune are
 * each told apart; a restart resumes the log where it was.
 */
import { generateKeyPairSync } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  MerkleFrontier,
  checkpointHash,
  entryLeafInput,
  leafHash,
  loadSigningKeyPem,
  verifyCheckpoint,
  verifyConsistencyProof,
  verifyInclusionProof,
  type LogEntryKind,
  type SignedCheckpoint,
} from "@writ/runtime";
import { AUDIT_DATABASES, LmdbAuditLog } from "../../src/audit/lmdb-audit-log.js";
import type { ExportLine } from "../../src/audit/record-log/record-log.js";
import type { AuditRetention } from "../../src/audit/retention.js";
import type { SecurityEventInput } from "../../src/audit/types.js";
import { at, decision, tempEnv, type TempEnv } from "./support.js";

const key = loadSigningKeyPem(generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString());
const EVENT: SecurityEventInput = { type: "authentication_failed", method: "GET", path: "/audit/stats", ip: "10.0.0.1", detail: "bearer token missing" };
/** Checkpoints only when the test asks (`checkpointNow`). */
const MANUAL = { key, intervalMs: 3_600_000, everyRecords: 1_000_000_000 };

let env: TempEnv;
let audit: LmdbAuditLog;

const open = (e: TempEnv, retention?: AuditRetention) =>
  new LmdbAuditLog(e.root, { checkpoints: MANUAL, ...(retention ? { retention } : {}) });

/** Decisions (every third with an override and a confirmation), verifications and security events. */
async function write(log: LmdbAuditLog, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const executionId = `exec-${i}`;
    log.writeRecord({ kind: "decision", body: decision({ executionId, recordedAt: at(i * 10) }) });
    if (i % 3 === 0) {
      log.writeRecord({ kind: "override", body: { executionId, approved: true, approvedBy: "ana", approverRole: "ops", reason: "ok", overrideId: `o-${i}`, record: {} as never, recordedAt: at(i * 10 + 1) } });
      log.writeRecord({ kind: "confirmation", body: { executionId, match: true, proof: {} as never, recordedAt: at(i * 10 + 2) } });
    }
    log.recordVerification({ executionId, valid: i % 2 === 0, checks: { signature: "verified" }, errors: [], recordedAt: at(i * 10 + 3) });
    if (i % 5 === 0) log.recordSecurityEvent({ ...EVENT, ip: `10.0.${i}.1` });
  }
  await log.flushed();
}

/** Recomputes every checkpoint of an export from its entries; the first position whose checkpoint does not hold. */
function recompute(lines: readonly ExportLine[]): { checkpoints: number; failure: string | null } {
  const start = lines[0];
  if (start?.type !== "start") return { checkpoints: 0, failure: "no start line" };
  const frontier = MerkleFrontier.from(start.size, start.frontier.map((h) => Buffer.from(h, "hex")));
  let checkpoints = 0;
  for (const line of lines.slice(1)) {
    if (line.type === "entry") {
      if ("removed" in line) frontier.append(Buffer.from(line.leaf, "hex"));
      else frontier.append(leafHash(entryLeafInput({ kind: line.kind as LogEntryKind, position: line.position, record: line.record })));
      if (line.position !== frontier.size - 1) return { checkpoints, failure: `entry ${line.position} out of place` };
    } else if (line.type === "checkpoint") {
      checkpoints += 1;
      if (!verifyCheckpoint(line.checkpoint, [key.publicKey]).valid) return { checkpoints, failure: `checkpoint ${line.checkpoint.size} signature` };
      if (Buffer.from(frontier.root()).toString("hex") !== line.checkpoint.rootHash) return { checkpoints, failure: `checkpoint ${line.checkpoint.size} root` };
    }
  }
  return { checkpoints, failure: null };
}

const exported = (log: LmdbAuditLog, from = 0): ExportLine[] => [...log.recordLog!.export(from)];

beforeEach(async () => {
  env = await tempEnv();
  audit = open(env);
});
afterEach(async () => {
  await audit.close();
  await env.dispose();
});

describe("the record log of the LMDB trail", () => {
  it("sequences every kind of record and signs chained checkpoints whose roots the export recomputes", async () => {
    await write(audit, 0, 30);
    const first = (await audit.recordLog!.checkpointNow())!;
    // 30 decisions, 10 overrides, 10 confirmations, 30 verifications, 6 security events.
    expect(first).toMatchObject({ logId: audit.recordLog!.logId, size: 86, previous: null });
    expect(verifyCheckpoint(first, [key.publicKey])).toMatchObject({ valid: true });
    await write(audit, 30, 10);
    const second = (await audit.recordLog!.checkpointNow())!;
    expect(second.size).toBe(86 + 30);
    expect(second.previous).toBe(checkpointHash(first));
    expect(await audit.recordLog!.checkpointNow()).toBeNull();

    const lines = exported(audit);
    const kinds = new Set(lines.flatMap((l) => (l.type === "entry" ? [l.kind] : [])));
    expect([...kinds].sort()).toEqual(["confirmation", "decision", "override", "security", "verification"]);
    expect(recompute(lines)).toEqual({ checkpoints: 2, failure: null });
    // From a checkpoint on: resumed from its frontier.
    expect(recompute(exported(audit, first.size))).toEqual({ checkpoints: 1, failure: null });
    expect(audit.recordLog!.status()).toMatchObject({ size: second.size, pending: 0, latest: second });
  });

  it("answers inclusion proofs of decisions and consistency proofs between checkpoints that verify", async () => {
    await write(audit, 0, 20);
    const first = (await audit.recordLog!.checkpointNow())!;
    await write(audit, 20, 20);
    const second = (await audit.recordLog!.checkpointNow())!;
    for (const n of [0, 7, 19, 33]) {
      const proof = (await audit.recordLog!.decisionInclusionProof(`exec-${n}`))!;
      expect(proof.checkpoint).toEqual(second);
      expect(verifyInclusionProof(proof, [key.publicKey])).toMatchObject({ valid: true });
    }
    // Against the first checkpoint: covered before it, not after.
    expect(verifyInclusionProof((await audit.recordLog!.decisionInclusionProof("exec-3", first.size))!, [key.publicKey]).valid).toBe(true);
    expect(await audit.recordLog!.decisionInclusionProof("exec-33", first.size)).toBeNull();
    expect(await audit.recordLog!.decisionInclusionProof("exec-unknown")).toBeNull();
    expect(verifyConsistencyProof(audit.recordLog!.consistencyProof(first.size, second.size)!, [key.publicKey])).toMatchObject({ valid: true });
  });

  it("tells an edited record and a removed one from a retention prune", async () => {
    await write(audit, 0, 12);
    await audit.recordLog!.checkpointNow();
    // An edit of one stored decision: its leaf no longer matches, so the covering checkpoint's root does not hold.
    const records = env.root.openDB<unknown, [number, string]>(AUDIT_DATABASES.decisionRecords, { encoding: "json" });
    const { key: target, value } = [...records.getRange({ limit: 1, offset: 4 })][0]!;
    await records.put(target, { ...(value as object), status: "approved", ruleMatched: "forged" });
    expect(recompute(exported(audit)).failure).toMatch(/^checkpoint \d+ root$/);
    // The export carries the record as stored now: the auditor sees what was forged, and where.
    expect(exported(audit).find((l) => l.type === "entry" && "record" in l && l.record.includes("forged"))).toMatchObject({ position: expect.any(Number) });
    // Removed outright (no prune note): the export still names its position, with only the leaf logged for it.
    await records.remove(target);
    expect(exported(audit).filter((l) => l.type === "entry" && "removed" in l)).toHaveLength(1);
  });

  it("logs what retention removed as a prune note, and the export still verifies", async () => {
    await audit.close();
    audit = open(env, { decisions: { maxAgeMs: null, maxRecords: null }, verifications: { maxAgeMs: null, maxRecords: 5 }, security: { maxAgeMs: null, maxRecords: null } });
    await write(audit, 0, 10);
    await audit.recordLog!.checkpointNow();
    expect(await audit.prune(new Date(at(1_000_000)))).toBe(5);
    const after = (await audit.recordLog!.checkpointNow())!;
    const lines = exported(audit);
    const gone = lines.filter((l) => l.type === "entry" && "removed" in l).map((l) => (l as { position: number }).position);
    expect(gone).toHaveLength(5);
    const note = lines.find((l) => l.type === "entry" && l.kind === "prune") as { record: string } | undefined;
    expect(JSON.parse(note!.record)).toEqual({ positions: gone, reason: "retention" });
    expect(after.size).toBe(lines.filter((l) => l.type === "entry").length);
    expect(recompute(lines)).toEqual({ checkpoints: 2, failure: null });
  });

  it("resumes after a restart: the same log id, positions and chain go on", async () => {
    await write(audit, 0, 5);
    const before = (await audit.recordLog!.checkpointNow()) as SignedCheckpoint;
    const logId = audit.recordLog!.logId;
    await write(audit, 5, 5);
    await audit.close();
    env = await env.reopen();
    audit = open(env);
    expect(audit.recordLog!.logId).toBe(logId);
    // What was written but not checkpointed before the restart is still pending, then sequenced.
    expect(audit.recordLog!.status()).toMatchObject({ size: before.size, pending: 15 });
    const after = (await audit.recordLog!.checkpointNow())!;
    expect(after.size).toBe(before.size + 15);
    expect(verifyConsistencyProof(audit.recordLog!.consistencyProof(before.size, after.size)!, [key.publicKey]).valid).toBe(true);
    expect(recompute(exported(audit))).toEqual({ checkpoints: 2, failure: null });
  });
});
