/**
 * The export's bound on disk reads a second (storage/lmdb/read-pacer.ts) against scripted reads and time: a reader that
 * waits what it is told never reads more in any stretch than the bound allows plus one second's burst, and a reader
 * within the bound is never told to wait; the sidecar's setting (`SERVICE_EXPORT_DISK_READS`) and a whole export under
 * a bound.
 */
import { tmpdir } from "node:os";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { DEFAULT_EXPORT_DISK_READS, DiskReadPacer } from "../../../src/storage/lmdb/read-pacer.js";

/** A reader of pages of `reads[i]` disk reads, each taking `readMs[i]`, that waits what the pacer owes before each page. */
function run(perSecond: number, pages: readonly { readonly reads: number; readonly readMs: number }[]) {
  let reads = 0;
  let now = 0;
  const pacer = new DiskReadPacer(perSecond, () => reads, now);
  const log: { readonly at: number; readonly reads: number }[] = [];
  const waits: number[] = [];
  for (const page of pages) {
    now += page.readMs;
    reads += page.reads;
    log.push({ at: now, reads });
    const owed = pacer.owedMs(now);
    waits.push(owed);
    now += owed;
  }
  return { log, waits };
}

const pages = fc.array(fc.record({ reads: fc.integer({ min: 0, max: 400 }), readMs: fc.double({ min: 0, max: 200, noNaN: true }) }), {
  maxLength: 200,
});

describe("an export's bound on disk reads a second", () => {
  it("keeps the reads of any stretch within the bound and one second's burst (the page read before a wait included)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 10, max: 2_000 }), pages, (perSecond, script) => {
        const { log } = run(perSecond, script);
        for (let i = 0; i < log.length; i++) {
          for (let j = i + 1; j < log.length; j++) {
            const stretchMs = log[j]!.at - log[i]!.at;
            const read = log[j]!.reads - log[i]!.reads;
            // The reads from page i+1 to page j: all but page j's were waited for.
            expect(read - script[j]!.reads).toBeLessThanOrEqual((perSecond * stretchMs) / 1000 + perSecond + 1e-6);
          }
        }
      }),
    );
  });

  it("never holds a reader that keeps within the bound", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 10, max: 2_000 }),
        fc.array(fc.double({ min: 1, max: 500, noNaN: true }), { maxLength: 100 }),
        (perSecond, gaps) => {
          const { waits } = run(
            perSecond,
            gaps.map((readMs) => ({ reads: Math.floor((perSecond * readMs) / 1000), readMs })),
          );
          expect(waits.every((wait) => wait === 0)).toBe(true);
        },
      ),
    );
  });

  it("owes the time the reads over the bound take at the bound", () => {
    let reads = 0;
    const pacer = new DiskReadPacer(100, () => reads, 0);
    reads = 100; // the second's burst
    expect(pacer.owedMs(0)).toBe(0);
    reads = 150;
    expect(pacer.owedMs(0)).toBe(500);
    expect(pacer.owedMs(500)).toBe(0);
    expect(() => new DiskReadPacer(0)).toThrow(/above 0 reads a second/);
  });

  it("is SERVICE_EXPORT_DISK_READS: 400 by default, 0 for none, a clear error otherwise", () => {
    const base = { SERVICE_API_KEY: "k".repeat(32), SERVICE_DATA_DIR: tmpdir(), SERVICE_POLICIES_ROOT: tmpdir() };
    const storage = (env: Record<string, string>) => loadConfig({ ...base, ...env }).storage;
    expect(storage({})).toMatchObject({ kind: "lmdb", exportDiskReads: DEFAULT_EXPORT_DISK_READS });
    expect(DEFAULT_EXPORT_DISK_READS).toBe(400);
    expect(storage({ SERVICE_EXPORT_DISK_READS: "0" })).toMatchObject({ exportDiskReads: null });
    expect(storage({ SERVICE_EXPORT_DISK_READS: "2500" })).toMatchObject({ exportDiskReads: 2500 });
    expect(() => storage({ SERVICE_EXPORT_DISK_READS: "fast" })).toThrow(
      /SERVICE_EXPORT_DISK_READS must be an integer from 0 to 1000000, not `fast`/,
    );
  });
});
