/**
 * What the LMDB record log does with records held in memory (storage/lmdb/record-log-storage.ts; docs/audit.md, "Serving the log"): they enter the log
 * once their write is known to have committed (the replay transition's answer, with no call from the runtime); a process that crashes with some in memory leaves its open mark, and the
 * next open takes every record the log lacks into it; a record adopted that way and still held in memory enters once.
 */
import { entryLeafHash, executionFingerprint } from "@writ/runtime";
import { LmdbReplayStore } from "@writ/runtime/lmdb";
import { describe, expect, it } from "vitest";
import { LmdbAuditLog } from "../../../src/storage/lmdb/audit-log.js";
import { LmdbLogStorage, type LoggedTrail } from "../../../src/storage/lmdb/record-log-storage.js";
import { locators } from "../../../src/audit/record-log/locator.js";
import { openLogDatabases } from "../../../src/storage/lmdb/record-log-databases.js";
import { exportedEntries } from "../../../src/storage/lmdb/record-log-export.js";
import { decision as decisionAudit, tempEnv } from "../../audit/support.js";

/** A trail of decisions in memory: what the log reads of the records it logs. */
function trailOf(records: Map<string, Buffer>): LoggedTrail {
  return {
    raw: (locator) => records.get(locator),
    prefetch: async () => undefined,
    storedCount: () => records.size,
    stored: () => Array.from(records, ([locator, raw]) => ({ locator, raw })),
    decisionLocator: async () => undefined,
  };
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

function decision(i: number): { locator: string; raw: Buffer; leaf: Uint8Array } {
  const raw = Buffer.from(JSON.stringify({ executionId: `exec-${i}`, recordedAt: new Date(1_764_000_000_000 + i).toISOString() }));
  return { locator: locators.decision(1_764_000_000_000 + i, `fp${i}`), raw, leaf: entryLeafHash({ kind: "decision", record: raw }) };
}

describe("the LMDB record log's records held in memory", () => {
  it("sequences a record once its write committed, drops one whose write did not, and keeps the log complete at a clean close", async () => {
    const env = await tempEnv();
    try {
      const records = new Map<string, Buffer>();
      const storage = new LmdbLogStorage(env.root, trailOf(records));
      expect(await storage.adoptUnlogged()).toBe(0);
      const [kept, conflicted] = [decision(1), decision(2)];
      records.set(kept.locator, kept.raw);
      storage.holdOnCommit(Promise.resolve(true), kept.locator, kept.leaf);
      storage.holdOnCommit(Promise.resolve(false), conflicted.locator, conflicted.leaf);
      await Promise.resolve();
      expect(await storage.counts(storage.logId)).toMatchObject({ size: 0, pending: 1 });
      expect(await storage.sequence(storage.logId, 1_000)).toBe(1);
      expect(await storage.counts(storage.logId)).toMatchObject({ size: 1, pending: 0 });
      expect((await storage.leaves(storage.logId, { start: 0, end: 1 })).map(hex)).toEqual([hex(kept.leaf)]);
      await storage.close();
      // Closed with nothing in memory: its mark is gone, so the next open has nothing to adopt.
      expect(await new LmdbLogStorage(env.root, trailOf(records)).adoptUnlogged()).toBe(0);
    } finally {
      await env.dispose();
    }
  });

  it("after a crash with records in memory, the next open adopts them, and a record both adopted and in memory enters once", async () => {
    const env = await tempEnv();
    try {
      const records = new Map<string, Buffer>();
      const crashed = new LmdbLogStorage(env.root, trailOf(records));
      await crashed.adoptUnlogged();
      const written = Array.from({ length: 5 }, (_, i) => decision(i));
      for (const r of written) {
        records.set(r.locator, r.raw);
        crashed.holdOnCommit(Promise.resolve(true), r.locator, r.leaf);
      }
      await Promise.resolve();
      // Never closed: its open mark stays. A mark of this process id under another key is a process gone (open-marks.ts).
      const next = new LmdbLogStorage(env.root, trailOf(records), crashed.logId);
      expect(await next.adoptUnlogged()).toBe(5);
      // Both sequence: the adopted pending entries and the crashed instance's memory name the same records.
      expect(await next.sequence(next.logId, 1_000)).toBe(5);
      expect(await crashed.sequence(crashed.logId, 1_000)).toBe(5);
      expect(await next.counts(next.logId)).toMatchObject({ size: 5, pending: 0 });
      const leaves = await next.leaves(next.logId, { start: 0, end: 5 });
      expect(leaves.map(hex).sort()).toEqual(written.map((r) => hex(r.leaf)).sort());
      // The adoption cleared the crashed mark; `next` closes cleanly: a third open adopts nothing.
      await next.close();
      expect(await new LmdbLogStorage(env.root, trailOf(records)).adoptUnlogged()).toBe(0);
    } finally {
      await env.dispose();
    }
  });

  it("keeps its mark when a record's outcome is unknown (its write failed), so the next open looks for it", async () => {
    const env = await tempEnv();
    try {
      const records = new Map<string, Buffer>();
      const storage = new LmdbLogStorage(env.root, trailOf(records));
      await storage.adoptUnlogged();
      const unknown = decision(7);
      records.set(unknown.locator, unknown.raw);
      storage.holdOnCommit(Promise.resolve(null), unknown.locator, unknown.leaf);
      await storage.close();
      expect(await new LmdbLogStorage(env.root, trailOf(records)).adoptUnlogged()).toBe(1);
    } finally {
      await env.dispose();
    }
  });

  it("holds exactly the winning consumption's record, told by the answer of the replay store it was handed to as data", async () => {
    const env = await tempEnv();
    try {
      const audit = new LmdbAuditLog(env.root);
      const replay = audit.recording(new LmdbReplayStore(env.root));
      const body = decisionAudit({ executionId: "raced", recordedAt: new Date(1_764_000_000_000).toISOString() });
      const results = await Promise.all(
        Array.from({ length: 50 }, () =>
          replay.consume(executionFingerprint("raced"), { now: 1_764_000_000_000, record: { kind: "decision", body } }),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      const status = await audit.recordLog!.status();
      expect(status!.size + status!.pending).toBe(1);
      await audit.close();
      await replay.close();
    } finally {
      await env.dispose();
    }
  });

  it("an export reads each record only after prefetching it, a page ahead, in the log's order (a store larger than memory waits on the disk off the event loop)", async () => {
    const env = await tempEnv();
    try {
      const records = new Map<string, Buffer>();
      const prefetched = new Set<string>();
      const readBeforePrefetch: string[] = [];
      const trail: LoggedTrail = {
        ...trailOf(records),
        raw: (locator) => {
          if (!prefetched.has(locator)) readBeforePrefetch.push(locator);
          return records.get(locator);
        },
        prefetch: async (locators) => {
          for (const locator of locators) prefetched.add(locator);
        },
      };
      const storage = new LmdbLogStorage(env.root, trail);
      await storage.adoptUnlogged();
      // Three pages and a part of one (EXPORT_PAGE is 256).
      const written = Array.from({ length: 3 * 256 + 17 }, (_, i) => decision(i));
      for (const r of written) {
        records.set(r.locator, r.raw);
        storage.holdOnCommit(Promise.resolve(true), r.locator, r.leaf);
      }
      await Promise.resolve();
      expect(await storage.sequence(storage.logId, 10_000)).toBe(written.length);
      const positions: number[] = [];
      const exported: string[] = [];
      for await (const entry of storage.entries(storage.logId, 5, written.length)) {
        positions.push(entry.position);
        exported.push(entry.record!);
      }
      expect(readBeforePrefetch).toEqual([]);
      expect(positions).toEqual(Array.from({ length: written.length - 5 }, (_, i) => i + 5));
      const leaves = await storage.leaves(storage.logId, { start: 5, end: written.length });
      expect(
        exported.map((record, i) => hex(entryLeafHash({ kind: "decision", record: Buffer.from(record) })) === hex(leaves[i]!)),
      ).not.toContain(false);
      // An export abandoned after its first page leaves nothing behind: the next one reads the same log.
      for await (const entry of storage.entries(storage.logId, 0, written.length)) if (entry.position === 3) break;
      let count = 0;
      for await (const _ of storage.entries(storage.logId, 0, written.length)) count += 1;
      expect(count).toBe(written.length);

      // Each page waits what the export's bound on disk reads owes (read-pacer.ts), before the next is read ahead.
      const owed: number[] = [];
      const started = performance.now();
      let paced = 0;
      const pacer = { owedMs: () => (owed.push(performance.now() - started), 30) };
      for await (const _ of exportedEntries(openLogDatabases(env.root), trail, 0, written.length, pacer)) paced += 1;
      expect(paced).toBe(written.length);
      expect(owed).toHaveLength(4);
      expect(owed[3]! - owed[0]!).toBeGreaterThanOrEqual(3 * 29);
      await storage.close();
    } finally {
      await env.dispose();
    }
  });
});
