/**
 * `prefetched` (storage/lmdb/prefetch.ts): reads are served after it as before, and it never calls lmdb-js's `prefetch` on a closed
 * environment, which crashes the process (a crash here fails the test file: its worker dies).
 */
import { describe, expect, it } from "vitest";
import { prefetched } from "../../../src/storage/lmdb/prefetch.js";
import { tempEnv } from "../../audit/support.js";

describe("prefetched", () => {
  it("brings keys in, present or not, and the reads after it answer as before", async () => {
    const env = await tempEnv();
    try {
      const db = env.root.openDB<string, [number, string]>("prefetch-test", { encoding: "json" });
      for (let i = 0; i < 300; i++) await db.put([i, `k${i}`], "x".repeat(5_000));
      await prefetched(env.root, db, [
        [3, "k3"],
        [299, "k299"],
        [1_000, "absent"],
      ]);
      expect(db.get([3, "k3"])).toHaveLength(5_000);
      expect(db.get([1_000, "absent"])).toBeUndefined();
      await prefetched(env.root, db, []);
    } finally {
      await env.dispose();
    }
  });

  it("does nothing once the environment closes, and a close waits for the prefetches already started", async () => {
    const env = await tempEnv();
    const db = env.root.openDB<string, number>("prefetch-test", { encoding: "json" });
    await db.put(1, "one");
    const started = prefetched(env.root, db, [1, 2, 3]);
    const closing = env.close();
    await expect(prefetched(env.root, db, [1])).resolves.toBeUndefined();
    await Promise.all([started, closing]);
    await expect(prefetched(env.root, db, [1])).resolves.toBeUndefined();
    expect(() => db.get(1)).toThrow(/closed/);
    await env.dispose();
  });
});
