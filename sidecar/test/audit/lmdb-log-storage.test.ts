/**
 * What the LMDB record log does with the records written with a replay transition (storage/lmdb/record-log-storage.ts,
 * PENDING RECORDS): the pending entry is written in the transition's own write, so exactly the winning transition's record
 * is pending once it is answered, with nothing held in memory for a crash to lose; a process
 * of an earlier release that crashed with records held in memory leaves its open mark, and the next open takes every
 * record the log lacks into it.
 */
import { entryLeafHash, executionFingerprint } from "@writ/runtime";
import { LmdbReplayStore } from "@writ/runtime/lmdb";
import { describe, expect, it } from "vitest";
import { LmdbAuditLog } from "../../src/storage/lmdb/audit-log.js";
import { LmdbLogStorage, type LoggedTrail } from "../../src/storage/lmdb/record-log-storage.js";
import { locators } from "../../src/audit/record-log/locator.js";
import { decision as decisionAudit, tempEnv } from "./support.js";

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

function decision(i: number): { ms: number; locator: string; raw: Buffer; leaf: Uint8Array } {
  const ms = 1_764_000_000_000 + i;
  const raw = Buffer.from(JSON.stringify({ executionId: `exec-${i}`, recordedAt: new Date(ms).toISOString() }));
  return { ms, locator: locators.decision(ms, `fp${i}`), raw, leaf: entryLeafHash({ kind: "decision", record: raw }) };
}

describe("the LMDB record log's records written with a replay transition", () => {
  it("pends exactly the winning consumption's record, in its write: once answered, it is pending or logged, once", async () => {
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
      // Durable with the consumption, with nothing held in memory: a crash now would leave it in the log or pending.
      const status = await audit.recordLog!.status();
      expect(status!.size + status!.pending).toBe(1);
      await audit.close();
      await replay.close();
    } finally {
      await env.dispose();
    }
  });

  it("after a crash of a process that held records in memory (an earlier release), the next open adopts them, once", async () => {
    const env = await tempEnv();
    try {
      const records = new Map<string, Buffer>();
      const crashed = new LmdbLogStorage(env.root, trailOf(records));
      await crashed.adoptUnlogged();
      // Stored without a pending entry, as that release wrote them: held in the crashed process's memory.
      const written = Array.from({ length: 5 }, (_, i) => decision(i));
      for (const r of written) records.set(r.locator, r.raw);
      // Never closed: its open mark stays. A mark of this process id under another key is a process gone (open-marks.ts).
      const next = new LmdbLogStorage(env.root, trailOf(records), crashed.logId);
      expect(await next.adoptUnlogged()).toBe(5);
      expect(await next.sequence(next.logId, 1_000)).toBe(5);
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
      for (const r of written) records.set(r.locator, r.raw);
      await env.root.transaction(() => {
        for (const r of written) storage.pendSync(r.ms, r.locator, r.leaf);
      });
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
      await storage.close();
    } finally {
      await env.dispose();
    }
  });
});
