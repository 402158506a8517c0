/**
 * The LMDB replay store's expiry index (runtime/src/replay/lmdb-expiry-index.ts, docs/replay.md "The expiry index"):
 * a sweep reads what has expired, not what the store holds; a data dir written before the index existed is indexed
 * once, in slices, resuming after a crash; and the index stays in step with the entries, in one process or several.
 * Work is counted in entries read (countReads), never timed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { open, type Key, type RootDatabase } from "lmdb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LmdbReplayStore } from "../../src/replay/lmdb-store.js";
import { startWorker, type Worker } from "./child.js";
import { T0, ok } from "../../src/testing/replay-contract-support.js";
import { backfillState, consumedEntry, countReads, expectedIndex, reservedEntry, storedIndex, writeWithoutIndex } from "./lmdb-support.js";

/** Keys per slice of the sweep and entries per slice of the backfill (lmdb-store.ts): what one write transaction reads. */
const SWEEP_SLICE = 128;
const BACKFILL_SLICE = 256;
const fp = (prefix: string, i: number): string => `${prefix}-${i.toString().padStart(7, "0")}`;

describe("LmdbReplayStore expiry index", () => {
  let dir: string;
  let root: RootDatabase;
  let workers: Worker[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-replay-expiry-"));
    root = open({ path: dir });
  });
  afterEach(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
    await Promise.all(workers.map((w) => w.closed));
    workers = [];
    await root.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a sweep among 200,000 consumed entries reads the 100 expired reservations, not the store", async () => {
    // Consumed entries never expire: they have no index key (here a data dir of an earlier release holds them).
    await writeWithoutIndex(
      root,
      Array.from({ length: 200_000 }, (_, i) => consumedEntry(fp("consumed", i), T0)),
    );
    const reads = countReads(root);
    const store = new LmdbReplayStore(root);
    // The backfill indexes what it finds, none of which expires, and marks the index complete.
    await store.backfillExpiryIndex();
    expect(storedIndex(root)).toMatchObject({ complete: true, keys: [] });
    for (let i = 0; i < 100; i++) ok(await store.reserve(fp("expired", i), { now: T0, ttlMs: 1_000 }));
    for (let i = 0; i < 10; i++) ok(await store.reserve(fp("live", i), { now: T0, ttlMs: 60_000 }));

    reads.reset();
    expect(await store.sweep(T0 + 1_000)).toBe(100);
    // Each expired key and its entry, and the one key past them (a live reservation): about 2 × 100, not 200,000.
    expect(reads.total()).toBeLessThanOrEqual(2 * 100 + 5);
    expect(reads.total()).toBeGreaterThanOrEqual(2 * 100);
    for (let i = 0; i < 100; i++) expect(await store.read(fp("expired", i))).toBeNull();
    expect(await store.read(fp("live", 0))).toMatchObject({ state: "reserved" });
    expect(await store.read(fp("consumed", 199_999))).toMatchObject({ state: "consumed" });
    expect(storedIndex(root).keys).toEqual(expectedIndex(root));

    reads.reset();
    expect(await store.sweep(T0 + 1_000)).toBe(0);
    expect(reads.total()).toBeLessThanOrEqual(5);
    await store.close();
  });

  it("sweeps in slices: no write transaction reads more than a slice, however much expired", async () => {
    const reads = countReads(root);
    const store = new LmdbReplayStore(root);
    await store.backfillExpiryIndex();
    await Promise.all(Array.from({ length: 3 * SWEEP_SLICE + 17 }, (_, i) => store.reserve(fp("r", i), { now: T0, ttlMs: 10 + (i % 7) })));
    reads.reset();
    expect(await store.sweep(T0 + 100)).toBe(3 * SWEEP_SLICE + 17);
    // A slice reads its keys (and one more) and their entries.
    expect(reads.maxPerTransaction).toBeLessThanOrEqual(2 * SWEEP_SLICE + 1);
    expect(storedIndex(root).keys).toEqual([]);
    await store.close();
  });

  it("removes a stale key and leaves the entry it no longer describes", async () => {
    const store = new LmdbReplayStore(root);
    await store.backfillExpiryIndex();
    const { token } = ok(await store.reserve("fp", { now: T0, ttlMs: 10 }));
    ok(await store.confirm("fp", token, T0 + 1));
    // A key the entry does not call for (a hand-edited database, a process of another version wrote it).
    const index = root.openDB<unknown, Key>("replay-expiry", { encoding: "json" });
    await index.put([T0 + 5, "fp"], true);
    await index.put([T0 + 5, "gone"], true);
    expect(await store.sweep(T0 + 10)).toBe(0);
    expect(await store.read("fp")).toMatchObject({ state: "consumed" });
    expect(storedIndex(root).keys).toEqual([]);
    await store.close();
  });

  it("indexes a data dir written without the index once, in slices, and sweeps it afterwards", async () => {
    const entries = [
      ...Array.from({ length: 5_000 }, (_, i) => consumedEntry(fp("consumed", i), T0)),
      ...Array.from({ length: 300 }, (_, i) => reservedEntry(fp("expired", i), T0, 1_000)),
      ...Array.from({ length: 20 }, (_, i) => reservedEntry(fp("live", i), T0, 1_000_000)),
      { ...reservedEntry("failed", T0, 30_000), state: "failed" as const },
    ];
    await writeWithoutIndex(root, entries);
    // Malformed: left out of the index, as every operation refuses it.
    await root.openDB<unknown, string>("replay", { encoding: "json" }).put("malformed", { fingerprint: "malformed", state: "weird" });
    const reads = countReads(root);
    const store = new LmdbReplayStore(root);
    // The constructor started the backfill; this call shares it.
    expect(await store.backfillExpiryIndex()).toBe(entries.length + 1);
    // A slice reads its entries, and the index's two bookkeeping keys.
    expect(reads.maxPerTransaction).toBeLessThanOrEqual(BACKFILL_SLICE + 3);
    const index = storedIndex(root);
    expect(index).toMatchObject({ complete: true, resumeAfter: undefined });
    expect(index.keys).toEqual(expectedIndex(root));
    expect(index.keys).toHaveLength(321);
    // Complete: a second store on the data dir reads nothing of it for the index (its fingerprint set reads the keys).
    reads.reset();
    const again = new LmdbReplayStore(root);
    expect(await again.backfillExpiryIndex()).toBe(0);
    expect(reads.byDb.get("replay-expiry") ?? 0).toBeLessThanOrEqual(2);
    await again.close();

    expect(await store.sweep(T0 + 30_000)).toBe(301);
    expect(await store.read(fp("expired", 0))).toBeNull();
    expect(await store.read("failed")).toBeNull();
    expect(await store.read(fp("live", 0))).toMatchObject({ state: "reserved" });
    expect(storedIndex(root).keys).toEqual(expectedIndex(root));
    await store.close();
  });

  it("stays correct while the backfill runs: transitions and sweeps meanwhile leave the index exact", async () => {
    await writeWithoutIndex(root, [
      ...Array.from({ length: 3_000 }, (_, i) => reservedEntry(fp("old", i), T0, i % 2 === 0 ? 10 : 1_000_000)),
      ...Array.from({ length: 3_000 }, (_, i) => consumedEntry(fp("consumed", i), T0)),
    ]);
    const store = new LmdbReplayStore(root);
    // While the backfill is under way: take over expired old reservations, move live ones on, and sweep.
    const work = await Promise.all([
      ...Array.from({ length: 200 }, (_, i) => store.reserve(fp("old", 2 * i), { now: T0 + 10, ttlMs: 500 })),
      ...Array.from({ length: 200 }, async (_, i) => {
        const entry = await store.read(fp("old", 2 * i + 1));
        return store.fail(fp("old", 2 * i + 1), entry!.token, { now: T0 + 10, ttlMs: 5 });
      }),
    ]);
    expect(work.every((r) => r.ok)).toBe(true);
    const sweptEarly = await store.sweep(T0 + 20);
    await store.backfillExpiryIndex();
    expect(storedIndex(root)).toMatchObject({ complete: true, keys: expectedIndex(root) });
    // Every expired entry goes, whether the early sweep found it indexed or not.
    const swept = sweptEarly + (await store.sweep(T0 + 20));
    // The even half expired at T0 + 10 but for the 200 taken over; the 200 failed at T0 + 15.
    expect(swept).toBe(1_300 + 200);
    expect(storedIndex(root).keys).toEqual(expectedIndex(root));
    expect(await store.read(fp("old", 0))).toMatchObject({ state: "reserved", expiresAt: T0 + 510 });
    await store.close();
  });

  it("resumes the backfill after a crash where it stopped, instead of starting over", async () => {
    const total = 60_000;
    await writeWithoutIndex(
      root,
      Array.from({ length: total }, (_, i) => (i % 10 === 0 ? reservedEntry(fp("e", i), T0, 1_000) : consumedEntry(fp("e", i), T0))),
    );
    const worker = startWorker("backfill-worker.ts", [dir]);
    workers.push(worker);
    await worker.waitForLine("ready");
    // Killed once it has indexed some slices and before it has indexed them all.
    let progress = backfillState(root);
    for (let polls = 0; progress.resumeAfter === undefined && !progress.complete && polls < 10_000; polls++) {
      await sleep(1);
      progress = backfillState(root);
    }
    worker.child.kill("SIGKILL");
    expect(await worker.closed).toEqual({ code: null, signal: "SIGKILL" });
    const killed = storedIndex(root);
    expect(killed.complete, `the worker finished before the kill: ${worker.lines.join(" | ")}`).toBe(false);
    expect(killed.resumeAfter).toBeDefined();
    const done = Array.from({ length: total }, (_, i) => fp("e", i)).filter((f) => f <= killed.resumeAfter!).length;
    expect(done).toBeGreaterThan(0);

    const store = new LmdbReplayStore(root);
    // The rest, not everything again.
    expect(await store.backfillExpiryIndex()).toBe(total - done);
    expect(storedIndex(root)).toMatchObject({ complete: true, keys: expectedIndex(root) });
    expect(storedIndex(root).keys).toHaveLength(total / 10);
    expect(await store.sweep(T0 + 1_000)).toBe(total / 10);
    await store.close();
  });

  it("two processes transitioning and sweeping the same fingerprints leave the index in step with the entries", async () => {
    const store = new LmdbReplayStore(root);
    await store.backfillExpiryIndex();
    workers = [startWorker("expiry-worker.ts", [dir, "1", "1500"]), startWorker("expiry-worker.ts", [dir, "2", "1500"])];
    await Promise.all(workers.map((w) => w.waitForLine("ready")));
    for (const w of workers) w.child.stdin.write("go\n");
    const exits = await Promise.all(workers.map((w) => w.closed));
    exits.forEach((exit, i) => expect(exit, workers[i]?.stderr()).toEqual({ code: 0, signal: null }));
    const counts = workers.map((w) => JSON.parse(w.lines.at(-1) ?? "{}") as Record<string, number>);
    // Not vacuous: both reserved, failed and confirmed, and sweeps removed something.
    for (const c of counts)
      for (const what of ["reserved", "failed", "confirmed"]) expect(c[what], JSON.stringify(counts)).toBeGreaterThan(0);
    expect(counts[0]!["swept"]! + counts[1]!["swept"]!, JSON.stringify(counts)).toBeGreaterThan(0);
    expect(storedIndex(root).keys).toEqual(expectedIndex(root));
    expect(storedIndex(root).keys.length).toBeGreaterThan(0);
    await store.close();
  });
});
