import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open, type RootDatabase } from "lmdb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RebuildProgress } from "../../src/replay/lmdb-entries.js";
import { LmdbReplayStore } from "../../src/replay/lmdb-store.js";
import { consumedEntry, countReads, writeWithoutIndex } from "./lmdb-support.js";

const T0 = 1_796_600_000_000;
const LEGACY = 20_000;
const LOGGED = 20_000;
const fp = (kind: string, i: number) => `${kind}-${i}`;

/** The reads of the two places entries are kept: the `replay` database and the entry log. */
const entryReads = (reads: ReturnType<typeof countReads>) => (reads.byDb.get("replay") ?? 0) + (reads.byDb.get("replay-log") ?? 0);

describe("LmdbReplayStore fingerprint set", () => {
  let dir: string;
  let root: RootDatabase;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-replay-set-"));
    // A data dir of an earlier release (entries in `replay`), then entries consumed by this one (in the log).
    const seed = open({ path: dir });
    await writeWithoutIndex(
      seed,
      Array.from({ length: LEGACY }, (_, i) => consumedEntry(fp("legacy", i), T0)),
    );
    const first = new LmdbReplayStore(seed);
    await Promise.all(Array.from({ length: LOGGED }, (_, i) => first.consume(fp("logged", i), { now: T0 })));
    await first.close();
    await seed.close();
    root = open({ path: dir });
  });
  afterEach(async () => {
    await root.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a consume of a new executionId reads no entry; a replay reads its one entry and is refused", async () => {
    const progress: RebuildProgress[] = [];
    const reads = countReads(root);
    const store = new LmdbReplayStore(root, { onRebuild: (p) => progress.push(p) });
    await store.ready();
    // The expiry index's backfill of the earlier release's entries reads them once: done before counting.
    await store.backfillExpiryIndex();
    expect(progress.at(-1)).toMatchObject({ done: true, read: LEGACY + LOGGED, total: LEGACY + LOGGED });
    expect(store.fingerprintSet()?.size).toBe(LEGACY + LOGGED);

    reads.reset();
    const fresh = await Promise.all(Array.from({ length: 2_000 }, (_, i) => store.consume(fp("new", i), { now: T0 + 1 })));
    expect(fresh.every((r) => r.ok)).toBe(true);
    expect(entryReads(reads)).toBe(0);

    for (const replayed of [fp("legacy", 7), fp("logged", 7), fp("new", 7)]) {
      reads.reset();
      expect(await store.consume(replayed, { now: T0 + 2 })).toMatchObject({ ok: false, reason: "conflict" });
      expect(entryReads(reads), replayed).toBe(1);
    }
    await store.close();
  });

  it("is whole again after a restart: every fingerprint ever consumed is refused, and none read before the set is ready", async () => {
    const store = new LmdbReplayStore(root);
    // Asked before the rebuild is done: it waits for it, never answers from a partial set.
    const early = await Promise.all([store.consume(fp("legacy", LEGACY - 1)), store.consume(fp("logged", LOGGED - 1))]);
    expect(early.map((r) => r.ok)).toEqual([false, false]);
    // Every seventh of each kind (a replay goes through the full transition: slower than a new one).
    const results = await Promise.all([
      ...Array.from({ length: LEGACY / 7 }, (_, i) => store.consume(fp("legacy", 7 * i))),
      ...Array.from({ length: LOGGED / 7 }, (_, i) => store.consume(fp("logged", 7 * i))),
    ]);
    expect(results.filter((r) => r.ok)).toHaveLength(0);
    await store.close();
  });

  it("fails closed when the set cannot be rebuilt: every operation is refused as unavailable", async () => {
    const openDB = root.openDB.bind(root) as (name: string, options: object) => { getKeys: (options?: object) => unknown };
    (root as { openDB: unknown }).openDB = (name: string, options: object) => {
      const db = openDB(name, options);
      if (name === "replay-log") {
        db.getKeys = () => {
          throw new Error("EIO: the disk failed");
        };
      }
      return db;
    };
    const store = new LmdbReplayStore(root);
    await expect(store.ready()).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    await expect(store.consume(fp("logged", 1))).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    await expect(store.consume(fp("new", 1))).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    await expect(store.read(fp("logged", 1))).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    await store.close();
  });

  it("a close while consumes wait for their group settles each: appended and acknowledged, or refused as closed", async () => {
    const store = new LmdbReplayStore(root);
    await store.ready();
    // The first is issued at once; the rest wait for it to settle, and the close comes first.
    const settled = Promise.allSettled(Array.from({ length: 500 }, (_, i) => store.consume(fp("closing", i), { now: T0 })));
    await store.close();
    const outcomes = await settled;
    const refused = outcomes.filter((o) => o.status === "rejected");
    expect(refused.every((o) => (o.reason as { code?: string }).code === "REPLAY_CLOSED")).toBe(true);
    expect(refused.length).toBeGreaterThan(0);
    const acknowledged = outcomes.flatMap((o, i) => (o.status === "fulfilled" && o.value.ok ? [fp("closing", i)] : []));
    expect(acknowledged.length + refused.length).toBe(500);
    // What was acknowledged is there after the close.
    const again = new LmdbReplayStore(root);
    for (const id of acknowledged) expect(await again.read(id), id).toMatchObject({ state: "consumed" });
    await again.close();
  });

  it("the sweep takes out of the set what it removes: the fingerprint is new again, and reads nothing", async () => {
    const reads = countReads(root);
    const store = new LmdbReplayStore(root);
    await store.ready();
    await store.backfillExpiryIndex();
    for (let i = 0; i < 50; i++) expect((await store.reserve(fp("reserved", i), { now: T0, ttlMs: 1_000 })).ok).toBe(true);
    expect(store.fingerprintSet()?.size).toBe(LEGACY + LOGGED + 50);
    expect(await store.sweep(T0 + 1_000)).toBe(50);
    expect(store.fingerprintSet()?.size).toBe(LEGACY + LOGGED);
    reads.reset();
    expect((await store.consume(fp("reserved", 3), { now: T0 + 2_000 })).ok).toBe(true);
    expect(entryReads(reads)).toBe(0);
    await store.close();
  });
});
