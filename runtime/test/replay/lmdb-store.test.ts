import { parseStoredEntry } from "../../src/replay/lifecycle.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReplayStoreClosedError, StoreUnavailableError } from "../../src/replay/errors.js";
import { LmdbDurability } from "../../src/replay/lmdb-durability.js";
import { LmdbReplayStore } from "../../src/replay/lmdb-store.js";
import type { LmdbConsumeOptions, LmdbPut, LmdbResolveOverrideOptions } from "../../src/replay/lmdb-puts.js";
import type { TransitionRecord } from "../../src/replay/records.js";
import type { ReplayResult } from "../../src/replay/store.js";
import { T0, into, ok } from "../../src/testing/replay-contract-support.js";
import { replayStoreContract } from "../../src/testing/replay-contract.js";
import { storedEntries, storedIndex } from "./lmdb-support.js";

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "writ-replay-"));
}

replayStoreContract("LmdbReplayStore", async () => {
  const dir = await tempDir();
  const root = open({ path: dir });
  // Each record handed to the store as a put of its own, as the sidecar's audit trail hands its puts: only the winning
  // transition's are written.
  const side = root.openDB<TransitionRecord, number>({ name: "records", encoding: "json" });
  let next = 0;
  const puts = (record: TransitionRecord | undefined): LmdbPut[] =>
    record === undefined ? [] : [{ db: side as unknown as LmdbPut["db"], key: (next += 1), value: record }];
  const store = new (class extends LmdbReplayStore {
    override consume(fingerprint: string, options: LmdbConsumeOptions = {}): Promise<ReplayResult> {
      return super.consume(fingerprint, { ...options, puts: puts(options.record) });
    }
    override resolveOverride(fingerprint: string, token: string, approved: boolean, options: LmdbResolveOverrideOptions = {}) {
      return super.resolveOverride(fingerprint, token, approved, { ...options, puts: puts(options.record) });
    }
  })(root);
  return {
    store,
    dispose: async () => {
      await root.close();
      await rm(dir, { recursive: true, force: true });
    },
    records: async () => {
      await root.flushed;
      return [...side.getRange()].map(({ value }) => value);
    },
    expiryIndex: async () => storedIndex(root).keys,
  };
});

describe("LmdbReplayStore", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("persists across close and reopen", async () => {
    const first = new LmdbReplayStore(dir);
    const token = await into(first, "consumed", "consumed");
    const pending = ok(await first.markPendingOverride("pending", await into(first, "pending", "reserved"), { a: [1, 2] }, T0 + 5));
    const reserved = ok(await first.reserve("reserved", { now: T0 }));
    await first.close();

    const second = LmdbReplayStore.open(dir);
    expect(await second.read("consumed")).toMatchObject({ state: "consumed", token });
    expect(await second.read("pending")).toEqual(pending);
    expect(await second.read("reserved")).toEqual(reserved);
    expect(await second.reserve("consumed", { now: T0 + 10 ** 12 })).toMatchObject({ ok: false, reason: "conflict" });
    ok(await second.resolveOverride("pending", pending.token, true, { now: T0 + 6 }));
    await second.close();
  });

  it("while its environment's writes are held, refuses every write before queuing it, with the hold's reason; reads go on", async () => {
    const root = open({ path: dir });
    const store = new LmdbReplayStore(root);
    try {
      const token = ok(await store.reserve("reserved", { now: T0 }));
      const durability = LmdbDurability.of(root);
      durability.hold("below the reserve");
      const held = new StoreUnavailableError("below the reserve");
      await expect(store.consume("consumed", { now: T0 })).rejects.toThrow(held);
      await expect(store.reserve("other", { now: T0 })).rejects.toThrow(held);
      await expect(store.startExecution("reserved", token.token, T0)).rejects.toThrow(held);
      await expect(store.sweep(T0 + 10 ** 12)).rejects.toThrow(held);
      expect(await store.read("consumed")).toBeNull();
      expect(await store.read("reserved")).toMatchObject({ state: "reserved" });
      durability.hold(null);
      ok(await store.consume("consumed", { now: T0 }));
    } finally {
      await store.close();
      await root.close();
    }
  });

  it("resolves every write only after `flushed` (acknowledged means durable)", async () => {
    const root = open({ path: dir });
    const events: string[] = [];
    // Observe the store's wait: `flushed` lives on the lmdb-js prototype; shadow it on this root with a thenable
    // that records when the live flush promise has settled, just before handing its value to the awaiter.
    const proto: object = Object.getPrototypeOf(root) as object;
    Object.defineProperty(root, "flushed", {
      configurable: true,
      get: () => {
        const live = Reflect.get(proto, "flushed", root) as PromiseLike<unknown>;
        return {
          then: (resolve: (v: unknown) => unknown, reject: (e: unknown) => unknown) =>
            live.then((v) => {
              events.push("flushed");
              return resolve(v);
            }, reject),
        };
      },
    });
    const store = new LmdbReplayStore(root);
    const { token } = ok(await store.reserve("fp", { now: T0 }));
    events.push("ack");
    ok(await store.confirm("fp", token, T0 + 1));
    events.push("ack");
    expect(await store.expire("fp", T0 + 2)).toBe(false);
    events.push("ack");
    expect(events).toEqual(["flushed", "ack", "flushed", "ack", "flushed", "ack"]);
    await store.close();
    await root.close();
  });

  it("lives in its own named database of a shared environment, which stays open after close", async () => {
    const root = open({ path: dir });
    const audit = root.openDB<unknown, string>("audit", { encoding: "json" });
    await audit.put("decision-1", { ok: true });
    const store = new LmdbReplayStore(root);
    const entry = ok(await store.reserve("fp", { now: T0 }));
    expect(parseStoredEntry(storedEntries(root).get("fp"), "fp")).toEqual(entry);
    expect(root.get("fp")).toBeUndefined();
    expect(audit.get("fp")).toBeUndefined();
    await store.close();
    // The environment and the other databases still work.
    await audit.put("decision-2", { ok: true });
    expect(audit.get("decision-1")).toEqual({ ok: true });
    const again = new LmdbReplayStore(root);
    expect(await again.read("fp")).toEqual(entry);
    await again.close();
    await root.close();
  });

  it("accepts another database name", async () => {
    const a = new LmdbReplayStore(dir, { dbName: "replay-a" });
    ok(await a.reserve("fp", { now: T0 }));
    await a.close();
    const b = new LmdbReplayStore(dir, { dbName: "replay-b" });
    ok(await b.reserve("fp", { now: T0 }));
    await b.close();
  });

  it("two store instances on one directory see each other's writes and never both win", async () => {
    const a = new LmdbReplayStore(dir);
    const b = new LmdbReplayStore(dir);
    const results = await Promise.all(Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? a : b).reserve("hot", { now: T0 })));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    await a.close();
    await b.close();
  });

  it("refuses a malformed stored value rather than guessing", async () => {
    const root = open({ path: dir });
    const raw = root.openDB<unknown, string>("replay", { encoding: "json" });
    await raw.put("bad", { fingerprint: "bad", state: "weird" });
    const store = new LmdbReplayStore(root);
    await expect(store.reserve("bad")).rejects.toThrow(/malformed entry/);
    await expect(store.read("bad")).rejects.toThrow(/malformed entry/);
    // The failed callback did not disturb others batched with it.
    const [bad, good] = await Promise.allSettled([store.reserve("bad"), store.reserve("good", { now: T0 })]);
    expect(bad.status).toBe("rejected");
    expect(good.status === "fulfilled" && good.value.ok).toBe(true);
    await store.close();
    await root.close();
  });

  it("an operation on an environment its owner is closing or closed fails at once as closed, and never crashes the process (a prefetch there would)", async () => {
    const root = open({ path: dir });
    const store = new LmdbReplayStore(root);
    expect((await store.consume("before-close", { now: T0 })).ok).toBe(true);
    const closing = root.close();
    await expect(store.consume("while-closing", { now: T0 })).rejects.toThrow(ReplayStoreClosedError);
    await closing;
    await expect(store.consume("after-close", { now: T0 })).rejects.toThrow(ReplayStoreClosedError);
    await expect(store.reserve("after-close", { now: T0 })).rejects.toThrow(ReplayStoreClosedError);
  });
});
