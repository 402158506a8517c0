/**
 * The tamper-evident record log (docs/audit.md, "Serving the log") as one suite that every store runs:
 * `recordLogContract("lmdb", open)`, the storage contract of sidecar/src/audit/record-log/log-storage.ts seen through
 * the routes' `RecordLog`. Records are written as the sidecar writes them: decisions, overrides and confirmations by
 * the replay store's transitions, the others through the audit log.
 *
 * Tampering: 200 tamperings drawn from a seeded generator across record kinds and positions (an
 * edit, a removal, two records swapped, a record inserted around the log), each applied to the store behind a
 * checkpointed log through the harness's `Tamperer`, then undone. Each time the export's verifier (runtime
 * `ExportVerifier`, what `writ audit verify` runs) fails and names the record: its position, or the record stored
 * around the log. The untouched log verifies before and after.
 */
import { generateKeyPairSync } from "node:crypto";
import {
  ExportVerifier,
  confirmationKey,
  entryLeafHash,
  executionFingerprint,
  inclusionProof,
  loadSigningKeyPem,
  toHex,
  verifyCheckpoint,
  verifyConsistencyProof,
  verifyInclusionProof,
  type ExportLine,
  type ExportReport,
  type LogEntryKind,
  type ReplayStore,
  type SigningKey,
  NODE_ED25519,
} from "@writ/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CheckpointSigner } from "../../src/audit/record-log/log-storage.js";
import type { RecordLog } from "../../src/audit/record-log/record-log.js";
import type { AuditRetention } from "../../src/audit/retention.js";
import type { AuditLog } from "../../src/audit/types.js";
import { prng } from "../durability/load.js";
import { at, decision } from "./support.js";

export const LOG_KEY: SigningKey = loadSigningKeyPem(
  generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
);
/** `key` signing checkpoints with node:crypto, as a sidecar without libsodium does. */
export const signerOf = (key: SigningKey): CheckpointSigner => ({ key, engine: NODE_ED25519 });
export const LOG_SIGNER = signerOf(LOG_KEY);
/** Checkpoints only when a test asks (`checkpointNow`). */
export const MANUAL_CHECKPOINTS = { signer: LOG_SIGNER, intervalMs: 3_600_000, everyRecords: 1_000_000_000 } as const;

/** Undoes one tampering. */
export type Undo = () => Promise<void>;

/** Changes the store behind the log, as someone with write access to it could. */
export interface Tamperer {
  /** The kind of the logged record at each position of the log. */
  kinds(): Promise<LogEntryKind[]>;
  /** Changes the stored record at `position` (its JSON gains a member). */
  edit(position: number, t: number): Promise<Undo>;
  /** Deletes it. */
  remove(position: number): Promise<Undo>;
  /** Exchanges the stored records at two positions of the same kind. */
  swap(a: number, b: number): Promise<Undo>;
  /** Stores a copy of the record at `position` under a key no logged record has. */
  insert(position: number, t: number): Promise<Undo>;
}

export interface RecordLogHarness {
  readonly audit: AuditLog;
  /** The replay store that writes the transition records. */
  readonly replay: ReplayStore;
  readonly tamper: Tamperer;
  /** Removes what is past its retention (the trail's `prune`). */
  prune(now: Date): Promise<number>;
  /** Closes and opens the same store again (a restart). */
  reopen(options?: { readonly retention?: AuditRetention }): Promise<RecordLogHarness>;
  dispose(): Promise<void>;
}

const EVENT = { type: "authentication_failed", method: "GET", path: "/audit/stats", detail: "wrong key" } as const;

function logOf(h: RecordLogHarness): RecordLog {
  const log = h.audit.recordLog;
  if (log === null) throw new Error("the harness's audit log keeps no record log");
  return log;
}

/** Decisions (every third escalated, then overridden; every fourth confirmed), verifications and security events. */
export async function writeTrail(h: RecordLogHarness, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const executionId = `exec-${i}`;
    const escalated = i % 3 === 0;
    const body = decision({ executionId, recordedAt: at(i * 10), status: escalated ? "pending_override" : "approved" });
    const fp = executionFingerprint(executionId);
    const consumed = await h.replay.consume(fp, {
      now: Date.parse(body.recordedAt),
      ...(escalated ? { context: { pending: true } } : {}),
      record: { kind: "decision", body },
    });
    expect(consumed.ok).toBe(true);
    if (escalated && consumed.ok) {
      const override = {
        executionId,
        approved: i % 2 === 0,
        approvedBy: "ana",
        approverRole: "ops",
        reason: `r${i}`,
        overrideId: `o-${i}`,
        record: { overrideId: `o-${i}` },
        recordedAt: at(i * 10 + 1),
      };
      expect(
        (
          await h.replay.resolveOverride(fp, consumed.entry.token, override.approved, {
            now: Date.parse(override.recordedAt),
            record: { kind: "override", body: override as never },
          })
        ).ok,
      ).toBe(true);
    }
    if (i % 4 === 0) {
      const confirmation = { executionId, match: true, proof: { executionId, signature: "sig" }, recordedAt: at(i * 10 + 2) };
      expect(
        (
          await h.replay.consume(confirmationKey(executionId), {
            now: Date.parse(confirmation.recordedAt),
            record: { kind: "confirmation", body: confirmation as never },
          })
        ).ok,
      ).toBe(true);
    }
    h.audit.recordVerification({
      executionId,
      valid: i % 2 === 0,
      checks: { signature: "verified" },
      errors: [],
      recordedAt: at(i * 10 + 3),
    });
    if (i % 5 === 0) h.audit.recordSecurityEvent({ ...EVENT, ip: `10.1.${i}.1` });
  }
  await h.audit.flushed();
}

async function exported(log: RecordLog, from = 0): Promise<ExportLine[]> {
  const lines: ExportLine[] = [];
  for await (const line of log.export(log.logId, from)) lines.push(line);
  return lines;
}

/** The export checked as `writ audit verify` checks it (after a JSON round trip, as a file would carry it). */
async function verified(log: RecordLog, from = 0): Promise<ExportReport> {
  const verifier = new ExportVerifier([LOG_KEY.publicKey]);
  for (const line of await exported(log, from)) verifier.add(JSON.parse(JSON.stringify(line)));
  return verifier.finish();
}

export function recordLogContract(
  label: string,
  open: (options?: { readonly retention?: AuditRetention }) => Promise<RecordLogHarness>,
): void {
  describe(`record log contract: ${label}`, () => {
    let h: RecordLogHarness;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(() => h.dispose());

    it("logs every kind of record and signs chained checkpoints that the export's verification recomputes", async () => {
      const log = logOf(h);
      await writeTrail(h, 0, 30);
      const first = (await log.checkpointNow())!;
      // 30 decisions, 10 overrides, 8 confirmations, 30 verifications, 6 security events.
      expect(first).toMatchObject({ logId: log.logId, size: 84, previous: null });
      expect(verifyCheckpoint(first, [LOG_KEY.publicKey])).toMatchObject({ valid: true });
      await writeTrail(h, 30, 10);
      const second = (await log.checkpointNow())!;
      expect(second.size).toBe(84 + 28);
      expect(await log.checkpointNow()).toBeNull();
      expect(await log.status()).toMatchObject({ logId: log.logId, size: second.size, pending: 0, latest: second });
      expect(await log.checkpoints(log.logId, 0, 10)).toEqual([first, second]);
      expect(await log.checkpointAt(log.logId, first.size)).toEqual(first);
      expect(await log.logIds()).toContain(log.logId);

      const lines = await exported(log);
      expect(new Set(lines.flatMap((l) => (l.type === "entry" ? [l.kind] : [])))).toEqual(
        new Set(["confirmation", "decision", "override", "security", "verification"]),
      );
      for (const line of lines)
        if (line.type === "entry" && "record" in line)
          expect(toHex(entryLeafHash({ kind: line.kind, record: line.record }))).toBe(line.leaf);
      expect(await verified(log)).toMatchObject({ valid: true, entries: second.size, checkpoints: 2 });
      // From a checkpoint on: resumed from its frontier.
      expect(await verified(log, first.size)).toMatchObject({ valid: true, entries: second.size - first.size, checkpoints: 1 });
      await expect(exported(log, 7)).rejects.toThrow("no checkpoint at size 7");
    });

    it("answers inclusion proofs of decisions and consistency proofs that verify, built from the kept subtree roots", async () => {
      const log = logOf(h);
      // Past 2 × 256 entries: the proofs read kept subtree roots (log-tree.ts NODE_HEIGHT) as well as leaves.
      await writeTrail(h, 0, 300);
      const first = (await log.checkpointNow())!;
      await writeTrail(h, 300, 60);
      const second = (await log.checkpointNow())!;
      expect(second.size).toBeGreaterThan(512);
      const leaves = (await exported(log)).flatMap((l) => (l.type === "entry" ? [Buffer.from(l.leaf, "hex")] : []));
      for (const n of [0, 7, 150, 299, 333]) {
        const proof = (await log.decisionInclusionProof(`exec-${n}`))!;
        expect(proof.checkpoint).toEqual(second);
        // Exactly RFC 9162's path over every leaf.
        expect(proof.auditPath).toEqual(inclusionProof(leaves.slice(0, second.size), proof.leafIndex).map(toHex));
        expect(verifyInclusionProof(proof, [LOG_KEY.publicKey])).toMatchObject({ valid: true });
      }
      expect(verifyInclusionProof((await log.decisionInclusionProof("exec-3", first.size))!, [LOG_KEY.publicKey]).valid).toBe(true);
      expect(await log.decisionInclusionProof("exec-333", first.size)).toBeNull();
      expect(await log.decisionInclusionProof("exec-unknown")).toBeNull();
      expect(await log.decisionInclusionProof("exec-3", first.size + 1)).toBeNull();
      expect(verifyConsistencyProof((await log.consistencyProof(log.logId, first.size, second.size))!, [LOG_KEY.publicKey])).toMatchObject({
        valid: true,
      });
      expect(await log.consistencyProof(log.logId, first.size, second.size + 1)).toBeNull();
      expect(await log.consistencyProof("no-such-log", first.size, second.size)).toBeNull();
      expect(await log.status("no-such-log")).toBeNull();
    });

    it("logs what retention removed as a prune note, and the export still verifies", async () => {
      await h.dispose();
      const limited = { maxAgeMs: null, maxRecords: null };
      h = await open({ retention: { decisions: limited, verifications: { maxAgeMs: null, maxRecords: 5 }, security: limited } });
      const log = logOf(h);
      await writeTrail(h, 0, 10);
      await log.checkpointNow();
      expect(await h.prune(new Date(at(1_000_000)))).toBe(5);
      const after = (await log.checkpointNow())!;
      const lines = await exported(log);
      const gone = lines.flatMap((l) => (l.type === "entry" && "removed" in l ? [l.position] : []));
      expect(gone).toHaveLength(5);
      const note = lines.find((l) => l.type === "entry" && l.kind === "prune") as { record: string } | undefined;
      expect(JSON.parse(note!.record)).toEqual({ positions: gone, reason: "retention" });
      expect(after.size).toBe(lines.filter((l) => l.type === "entry").length);
      expect(await verified(log)).toMatchObject({ valid: true, removed: 5 });
    });

    it("retention and sequencing at once: every record retention removed is in a prune note, and the export verifies", async () => {
      await h.dispose();
      const unlimited = { maxAgeMs: null, maxRecords: null };
      h = await open({ retention: { decisions: unlimited, verifications: { maxAgeMs: null, maxRecords: 1 }, security: unlimited } });
      const log = logOf(h);
      // Each round writes three verifications: retention removes records still pending as well as logged ones.
      let removed = 0;
      for (let round = 0; round < 48; round++) {
        await writeTrail(h, round * 3, 3);
        // The round starts before, with, or after the prune's chunk is queued (its reads come first).
        const turns = round % 12;
        const sequenced = (async () => {
          for (let t = 0; t < turns; t++) await new Promise<void>((resolve) => setImmediate(resolve));
          return log.checkpointNow();
        })();
        removed += (await Promise.all([h.prune(new Date(at(10_000_000))), sequenced]))[0];
      }
      await log.checkpointNow();
      expect(removed).toBe(48 * 3 - 1);
      // The verification fails on a logged record removed without a prune note listing its position.
      const report = await verified(log);
      expect(report.failures).toEqual([]);
      expect(report.valid).toBe(true);
    });

    it("resumes after a restart: the same log id, positions and chain go on, and nothing pending is lost", async () => {
      const log = logOf(h);
      await writeTrail(h, 0, 5);
      const before = (await log.checkpointNow())!;
      await writeTrail(h, 5, 5);
      h = await h.reopen();
      const again = logOf(h);
      expect(again.logId).toBe(log.logId);
      const after = (await again.checkpointNow())!;
      expect(after.size).toBe(before.size + 14);
      expect(after.previous).not.toBeNull();
      expect(verifyConsistencyProof((await again.consistencyProof(again.logId, before.size, after.size))!, [LOG_KEY.publicKey]).valid).toBe(
        true,
      );
      expect(await verified(again)).toMatchObject({ valid: true, checkpoints: 2 });
    });

    it("detects and names 200 tamperings across kinds and positions; the untouched log verifies", async () => {
      const log = logOf(h);
      // Three checkpoints along the way, and a last one: tamperings land before, between and after them.
      for (let i = 0; i < 40; i += 10) {
        await writeTrail(h, i, 10);
        await log.checkpointNow();
      }
      const kinds = await h.tamper.kinds();
      expect(await verified(log)).toMatchObject({ valid: true, entries: kinds.length, checkpoints: 4 });
      const random = prng(15_015);
      const pick = (n: number) => Math.floor(random() * n);
      const seen = { edit: 0, remove: 0, swap: 0, insert: 0 };
      for (let t = 0; t < 200; t++) {
        const operation = (["edit", "remove", "swap", "insert"] as const)[t % 4]!;
        const position = pick(kinds.length);
        const kind = kinds[position]!;
        let undo: Undo;
        let named: (report: ExportReport) => boolean;
        if (operation === "edit") {
          undo = await h.tamper.edit(position, t);
          named = (r) => r.failures[0]?.position === position;
        } else if (operation === "remove") {
          undo = await h.tamper.remove(position);
          named = (r) => r.failures[0]?.position === position && /removed/.test(r.failures[0].reason);
        } else if (operation === "swap") {
          // Another record of the same kind, so the store's shape stays plausible.
          const others = kinds.flatMap((k, i) => (k === kind && i !== position ? [i] : []));
          const other = others[pick(others.length)]!;
          undo = await h.tamper.swap(position, other);
          named = (r) => r.failures[0]?.position === Math.min(position, other);
        } else {
          undo = await h.tamper.insert(position, t);
          named = (r) => r.failures.some((f) => /stored but not in the log/.test(f.reason));
        }
        const report = await verified(log);
        expect(report.valid, `${operation} at position ${position} (${kind}) went unnoticed`).toBe(false);
        expect(named(report), `${operation} at position ${position} (${kind}): ${JSON.stringify(report.failures[0])}`).toBe(true);
        seen[operation] += 1;
        await undo();
      }
      expect(seen).toEqual({ edit: 50, remove: 50, swap: 50, insert: 50 });
      expect(await verified(log)).toMatchObject({ valid: true });
    });
  });
}
