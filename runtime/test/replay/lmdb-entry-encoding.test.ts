/**
 * How the LMDB replay store keeps an entry (replay/lmdb-entry-encoding.ts): the array form reads back as the entry it
 * was made from, whatever its state, times, context and resolution; it is a fraction of the object form; and a data dir
 * holding the object form an earlier release wrote is read and carried on as it is.
 */
import fc from "fast-check";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { describe, expect, it } from "vitest";
import { makeEntry, parseStoredEntry } from "../../src/replay/lifecycle.js";
import { decodeEntry, encodeEntry } from "../../src/replay/lmdb-entry-encoding.js";
import { LmdbReplayStore } from "../../src/replay/lmdb-store.js";
import type { ReplayEntry, ReplayState } from "../../src/replay/store.js";

const STATES: ReplayState[] = ["reserved", "executing", "consumed", "failed", "pending_override", "rejected"];
const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const time = fc.integer({ min: 0, max: 2 ** 45 });
const entries = fc
  .record({
    fingerprint: fc.string({ minLength: 1, maxLength: 70 }),
    state: fc.constantFrom(...STATES),
    token: fc.oneof(fc.uuid(), fc.string()),
    createdAt: time,
    updated: fc.option(time),
    expiresAt: fc.option(time),
    context: fc.option(json, { nil: undefined }),
    resolution: fc.option(json, { nil: undefined }),
  })
  .map(({ updated, ...e }) => makeEntry({ ...e, updatedAt: updated ?? e.createdAt }));

describe("LMDB replay entries", () => {
  it("read back as the entry they were made from", () => {
    fc.assert(
      fc.property(entries, (entry) => {
        const stored = JSON.parse(encodeEntry(entry)) as unknown;
        expect(parseStoredEntry(decodeEntry(stored, entry.fingerprint), entry.fingerprint)).toEqual(entry);
      }),
      { numRuns: 1_000 },
    );
  });

  it("keep a consumed entry in a third of the object form", () => {
    const entry = makeEntry({
      fingerprint: "a".repeat(64),
      state: "consumed",
      token: crypto.randomUUID(),
      createdAt: Date.now(),
      updatedAt: Date.now(),
      expiresAt: null,
    });
    expect(encodeEntry({ ...entry, updatedAt: entry.createdAt }).length * 3).toBeLessThan(JSON.stringify(entry).length);
  });

  it("a data dir of entries in the object form is read and carried on as it is", async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-replay-entries-"));
    try {
      const root = open({ path: dir });
      const before: ReplayEntry[] = [
        makeEntry({ fingerprint: "c", state: "consumed", token: "t-c", createdAt: 1, updatedAt: 1, expiresAt: null }),
        makeEntry({
          fingerprint: "p",
          state: "pending_override",
          token: "t-p",
          createdAt: 2,
          updatedAt: 2,
          expiresAt: null,
          context: { a: 1 },
        }),
      ];
      const raw = root.openDB<unknown, string>("replay", { encoding: "json" });
      for (const entry of before) await raw.put(entry.fingerprint, entry);
      const store = new LmdbReplayStore(root);
      expect(await store.read("c")).toEqual(before[0]);
      expect(await store.consume("c")).toMatchObject({ ok: false, reason: "conflict", entry: before[0] });
      const resolved = await store.resolveOverride("p", "t-p", true, { resolution: { by: "x" }, now: 3 });
      expect(resolved).toMatchObject({ ok: true, entry: { state: "consumed", context: { a: 1 }, resolution: { by: "x" } } });
      // Written again in the array form; the untouched one keeps the object form.
      expect(Array.isArray(raw.get("p"))).toBe(true);
      expect(Array.isArray(raw.get("c"))).toBe(false);
      await store.close();
      await root.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
