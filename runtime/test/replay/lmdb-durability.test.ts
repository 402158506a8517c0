/**
 * LmdbDurability against a scripted environment: lmdb-js's failure modes (a rejected commit with its second
 * `commitError` promise, a flush promise that never resolves) without filling a disk. The full-disk run of the built
 * sidecar is sidecar/test/hardening/full-disk.stress.test.ts.
 */
import type { RootDatabase } from "lmdb";
import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../src/replay/errors.js";
import { LmdbDurability } from "../../src/replay/lmdb-durability.js";
import type { StoreHealth } from "../../src/replay/store.js";

/** A root whose `flushed` is whatever the test sets, and whose probe writes succeed or fail as the test says. */
function scriptedRoot() {
  const script = {
    flushed: Promise.resolve() as Promise<unknown>,
    probeFails: false,
    probes: 0,
  };
  const probeDb = {
    put: () => {
      script.probes += 1;
      return script.probeFails ? Promise.reject(commitFailure()) : Promise.resolve(true);
    },
  };
  const root = {
    get flushed() {
      return script.flushed;
    },
    openDB: () => probeDb,
  } as unknown as RootDatabase;
  return { root, script };
}

/** What lmdb-js rejects a write of a failed batch with: a second promise, rejected later with the cause. */
function commitFailure(): Error {
  const commitError = Promise.reject(Object.assign(new Error("No space left on device: Attempting to write page"), { code: 28 }));
  return Object.assign(new Error("Commit failed (see commitError for details)"), { commitError });
}

const never = () => new Promise<never>(() => undefined);

describe("LmdbDurability", () => {
  it("turns a failed commit into StoreUnavailableError, handles lmdb-js's commitError, and reports the cause", async () => {
    const { root } = scriptedRoot();
    const changes: StoreHealth[] = [];
    const durability = LmdbDurability.of(root, { onChange: (health) => changes.push(health) });
    await expect(durability.commit(Promise.reject(commitFailure()))).rejects.toBeInstanceOf(StoreUnavailableError);
    // The commitError's rejection is handled (no unhandled rejection fails this test) and names the cause.
    await new Promise((resolve) => setImmediate(resolve));
    expect(durability.health().ok).toBe(false);
    expect(durability.health().problem).toMatch(/^data dir write failed: no space left on device/);
    expect(changes).toHaveLength(1);
  });

  it("settles a write nobody awaits: its failure is recorded, never unhandled", async () => {
    const { root } = scriptedRoot();
    const durability = LmdbDurability.of(root);
    durability.settle(Promise.reject(commitFailure()));
    await new Promise((resolve) => setImmediate(resolve));
    expect(durability.health().ok).toBe(false);
  });

  it("fails every request waiting for a flush when a commit fails meanwhile (the failed batch's flush never resolves)", async () => {
    const { root, script } = scriptedRoot();
    const durability = LmdbDurability.of(root);
    script.flushed = never();
    const waiting = [durability.flushed(), durability.flushed()];
    durability.fail(commitFailure());
    for (const waiter of waiting) await expect(waiter).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it("times out a flush that never completes", async () => {
    const { root, script } = scriptedRoot();
    const durability = LmdbDurability.of(root, { flushTimeoutMs: 50 });
    script.flushed = never();
    await expect(durability.flushed()).rejects.toThrow(/did not confirm a write within 50 ms/);
    expect(durability.health().ok).toBe(false);
  });

  it("after a failure, writes a probe before waiting for a flush: refused while the probe fails, resolved once it succeeds", async () => {
    const { root, script } = scriptedRoot();
    const durability = LmdbDurability.of(root, { flushTimeoutMs: 1_000 });
    durability.fail(commitFailure());
    // The failed batch's flush promise: waiting on it alone would hang.
    script.flushed = never();
    script.probeFails = true;
    await expect(durability.flushed()).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(script.probes).toBe(1);
    script.probeFails = false;
    script.flushed = Promise.resolve();
    await expect(durability.flushed()).resolves.toBeUndefined();
    expect(script.probes).toBe(2);
  });

  it("reports ok again only once writes succeeded for the hold time, so a nearly full disk does not flap", async () => {
    const { root } = scriptedRoot();
    const changes: boolean[] = [];
    const durability = LmdbDurability.of(root, { recoveryHoldMs: 5_000, onChange: (health) => changes.push(health.ok) });
    // The failure's time is between `before` and `after`, however long the machine pauses in between.
    const before = Date.now();
    durability.fail(commitFailure());
    await durability.probe();
    const after = Date.now();
    expect(durability.health(before + 4_999).ok).toBe(false);
    expect(durability.health(after + 5_000).ok).toBe(true);
    expect(changes).toEqual([false, true]);
  });

  it("holds writes at its owner's word: admit refuses them with the reason, health says it once, no probe writes; then lets them through", async () => {
    const { root, script } = scriptedRoot();
    const changes: StoreHealth[] = [];
    const durability = LmdbDurability.of(root, { onChange: (health) => changes.push(health) });
    durability.hold("the data dir has 1 MB free");
    durability.hold("the data dir has 0.9 MB free");
    expect(() => durability.admit()).toThrow(new StoreUnavailableError("the data dir has 0.9 MB free"));
    const held = durability.health();
    expect(held).toMatchObject({ ok: false, problem: "the data dir has 0.9 MB free" });
    expect(changes).toEqual([{ ...held, problem: "the data dir has 1 MB free" }]);
    // A failure meanwhile: no probe writes while held, and the hold is what health says.
    durability.fail(commitFailure());
    await durability.probe();
    expect(script.probes).toBe(0);
    expect(durability.health().problem).toBe("the data dir has 0.9 MB free");

    durability.hold(null);
    expect(() => durability.admit()).not.toThrow();
    // The failure still stands until writes succeed again.
    expect(durability.health().ok).toBe(false);
    await durability.probe();
    expect(script.probes).toBe(1);
    durability.hold(null);
    expect(changes.map((health) => health.ok)).toEqual([false, false]);
  });

  it("is one watcher per environment", () => {
    const { root } = scriptedRoot();
    expect(LmdbDurability.of(root)).toBe(LmdbDurability.of(root));
  });
});
