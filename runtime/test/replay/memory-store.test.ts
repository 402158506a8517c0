import { describe, expect, it, vi } from "vitest";
import { ReplayCapacityError } from "../../src/replay/errors.js";
import { DEFAULT_MEMORY_CAPACITY, MemoryReplayStore } from "../../src/replay/memory-store.js";
import { RESERVATION_TTL_MS } from "../../src/replay/store.js";
import type { TransitionRecord } from "../../src/replay/records.js";
import { T0, into, ok } from "../../src/testing/replay-contract-support.js";
import { replayStoreContract } from "../../src/testing/replay-contract.js";

replayStoreContract("MemoryReplayStore", async () => {
  const records: TransitionRecord[] = [];
  return {
    store: new MemoryReplayStore({ writeRecord: (record) => void records.push(record) }),
    dispose: async () => {},
    records: async () => records,
  };
});

describe("MemoryReplayStore capacity", () => {
  it("defaults to 1,000,000 entries (spec 8)", () => {
    expect(DEFAULT_MEMORY_CAPACITY).toBe(1_000_000);
    expect(new MemoryReplayStore().capacity).toBe(1_000_000);
    expect(new MemoryReplayStore({ capacity: 7 }).capacity).toBe(7);
  });

  it("refuses a capacity that is not a positive integer", () => {
    for (const capacity of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new MemoryReplayStore({ capacity })).toThrow(RangeError);
    }
  });

  it("throws ReplayCapacityError past its capacity, without storing the entry", async () => {
    const store = new MemoryReplayStore({ capacity: 3 });
    for (const fp of ["a", "b", "c"]) ok(await store.reserve(fp, { now: T0 }));
    const error = await store.reserve("d", { now: T0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayCapacityError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: "ReplayCapacityError", code: "REPLAY_CAPACITY", capacity: 3 });
    expect((error as Error).message).toMatch(/^replay store is full/);
    expect(await store.read("d")).toBeNull();
    expect(store.size).toBe(3);
    // A full store still answers for the fingerprints it holds.
    expect(await store.reserve("a", { now: T0 })).toMatchObject({ ok: false, reason: "conflict" });
  });

  it("counts consumed entries forever and expired ones until they are swept", async () => {
    const store = new MemoryReplayStore({ capacity: 2 });
    await into(store, "consumed", "consumed");
    ok(await store.reserve("short", { now: T0, ttlMs: 10 }));
    // Expired but not swept: still counts.
    await expect(store.reserve("new", { now: T0 + 10 })).rejects.toBeInstanceOf(ReplayCapacityError);
    // Reserving the expired fingerprint itself replaces it and needs no room.
    const replaced = ok(await store.reserve("short", { now: T0 + 10, ttlMs: 10 }));
    expect(replaced.createdAt).toBe(T0 + 10);
    expect(store.size).toBe(2);
    expect(await store.sweep(T0 + 20)).toBe(1);
    expect(store.size).toBe(1);
    ok(await store.reserve("new", { now: T0 + 20 }));
    await expect(store.reserve("newer", { now: T0 + RESERVATION_TTL_MS })).rejects.toBeInstanceOf(ReplayCapacityError);
    expect(await store.expire("new", T0 + 20 + RESERVATION_TTL_MS)).toBe(true);
    ok(await store.reserve("newer", { now: T0 + 20 + RESERVATION_TTL_MS }));
  });

  it("under concurrency, exactly `capacity` distinct reserves succeed and the rest throw", async () => {
    const store = new MemoryReplayStore({ capacity: 100 });
    const results = await Promise.allSettled(Array.from({ length: 250 }, (_, i) => store.reserve(`fp-${i}`, { now: T0 })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(100);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(rejected).toHaveLength(150);
    for (const r of rejected) expect(r.reason).toBeInstanceOf(ReplayCapacityError);
    expect(store.size).toBe(100);
  });

  it("keeps nothing after close", async () => {
    const store = new MemoryReplayStore();
    await into(store, "fp", "consumed");
    await store.close();
    expect(store.size).toBe(0);
  });
});

describe("MemoryReplayStore sweep", () => {
  it("looks at what expired, not at every entry: 200,000 consumed and 100 expired reservations", async () => {
    const store = new MemoryReplayStore();
    for (let i = 0; i < 200_000; i++) ok(await store.consume(`consumed-${i}`, { now: T0 }));
    for (let i = 0; i < 100; i++) ok(await store.reserve(`expired-${i}`, { now: T0, ttlMs: 1_000 }));
    for (let i = 0; i < 10; i++) ok(await store.reserve(`live-${i}`, { now: T0, ttlMs: 60_000 }));
    // Every way to look at a Map's entries, counted while the sweep runs.
    const looks = [
      vi.spyOn(Map.prototype, "get"),
      vi.spyOn(Map.prototype, Symbol.iterator),
      vi.spyOn(Map.prototype, "entries"),
      vi.spyOn(Map.prototype, "values"),
      vi.spyOn(Map.prototype, "forEach"),
    ];
    let removed: number;
    let calls: number[];
    try {
      removed = await store.sweep(T0 + 1_000);
    } finally {
      calls = looks.map((spy) => spy.mock.calls.length);
      for (const spy of looks) spy.mockRestore();
    }
    expect(removed).toBe(100);
    // One lookup per expired entry; no walk over the entries.
    expect(calls).toEqual([100, 0, 0, 0, 0]);
    expect(store.size).toBe(200_010);
    expect(await store.read("expired-0")).toBeNull();
    expect(await store.read("live-0")).toMatchObject({ state: "reserved" });
  });
});
