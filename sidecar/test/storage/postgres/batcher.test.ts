import { describe, expect, it, vi } from "vitest";
import { Batcher } from "../../../src/storage/postgres/batcher.js";

/** A run that waits until released, recording the batches it was given. */
function gated() {
  const batches: number[][] = [];
  const releases: (() => void)[] = [];
  const run = async (items: readonly number[]): Promise<number[]> => {
    batches.push([...items]);
    await new Promise<void>((resolve) => releases.push(resolve));
    return items.map((i) => i * 10);
  };
  const releaseAll = async (): Promise<void> => {
    while (releases.length > 0) releases.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { batches, run, releaseAll };
}

describe("Batcher", () => {
  it("runs an item alone and at once when nothing is under way", async () => {
    const g = gated();
    const batcher = new Batcher(g.run, { maxInFlight: 2, maxBatch: 10 });
    const answer = batcher.submit(1);
    await Promise.resolve();
    expect(g.batches).toEqual([[1]]);
    await g.releaseAll();
    expect(await answer).toBe(10);
  });

  it("items submitted while every run is under way leave together, in order, up to maxBatch per run", async () => {
    const g = gated();
    const batcher = new Batcher(g.run, { maxInFlight: 1, maxBatch: 3 });
    const answers = [batcher.submit(0)];
    await Promise.resolve();
    for (let i = 1; i <= 7; i++) answers.push(batcher.submit(i));
    await Promise.resolve();
    expect(g.batches).toEqual([[0]]);
    for (let round = 0; round < 4; round++) await g.releaseAll();
    expect(g.batches).toEqual([[0], [1, 2, 3], [4, 5, 6], [7]]);
    expect(await Promise.all(answers)).toEqual([0, 10, 20, 30, 40, 50, 60, 70]);
  });

  it("never has more than maxInFlight runs under way", async () => {
    let running = 0;
    let most = 0;
    const batcher = new Batcher(
      async (items: readonly number[]) => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 1));
        running--;
        return items;
      },
      { maxInFlight: 3, maxBatch: 5 },
    );
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (i % 7 === 0 ? new Promise((r) => setTimeout(r, 0)) : Promise.resolve()).then(() => batcher.submit(i)),
      ),
    );
    expect(answers).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(most).toBe(3);
  });

  it("a run that throws rejects exactly its own items; later runs go on", async () => {
    let calls = 0;
    const batcher = new Batcher(
      async (items: readonly string[]) => {
        calls++;
        if (items.includes("bad")) throw new Error("refused");
        return items.map((s) => s.toUpperCase());
      },
      { maxInFlight: 1, maxBatch: 2 },
    );
    // Submitted in one tick: ["a", "bad"] go together, then ["c", "d"].
    const results = await Promise.allSettled(["a", "bad", "c", "d"].map((s) => batcher.submit(s)));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "fulfilled", "fulfilled"]);
    expect((results[2] as PromiseFulfilledResult<string>).value).toBe("C");
    expect(calls).toBe(2);
  });

  it("a run answering the wrong number of outputs rejects its items", async () => {
    const batcher = new Batcher(async () => [1], { maxInFlight: 1, maxBatch: 5 });
    const results = await Promise.allSettled([batcher.submit(1), batcher.submit(2)]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });

  it("refuses limits below 1", () => {
    expect(() => new Batcher(async (x: readonly number[]) => x, { maxInFlight: 0, maxBatch: 1 })).toThrow(/maxInFlight/);
    expect(() => new Batcher(async (x: readonly number[]) => x, { maxInFlight: 1, maxBatch: 0.5 })).toThrow(/maxBatch/);
  });

  describe("with a deadline", () => {
    it("rejects items queued behind a hanging run at their deadline, never sends them, and answers later items normally", async () => {
      vi.useFakeTimers();
      try {
        const g = gated();
        const batcher = new Batcher(g.run, { maxInFlight: 1, maxBatch: 10, deadlineMs: 1_000 });
        const outcomes: string[] = [];
        const track = (p: Promise<number>, name: string) =>
          p.then(
            (v) => outcomes.push(`${name}=${v}`),
            (e: Error) => outcomes.push(`${name}:${e.name}`),
          );
        const first = track(batcher.submit(1), "a");
        await Promise.resolve();
        await vi.advanceTimersByTimeAsync(400);
        const queued = track(batcher.submit(2), "b");
        await vi.advanceTimersByTimeAsync(599);
        expect(outcomes).toEqual([]);
        // The hanging run's item, then the queued one, each at its own deadline.
        await vi.advanceTimersByTimeAsync(1);
        expect(outcomes).toEqual(["a:BatchDeadlineExceeded"]);
        await vi.advanceTimersByTimeAsync(400);
        await Promise.all([first, queued]);
        expect(outcomes).toEqual(["a:BatchDeadlineExceeded", "b:BatchDeadlineExceeded"]);
        // The run answers at last: nothing changes for its expired item, and the expired queued one was never sent.
        vi.useRealTimers();
        await g.releaseAll();
        expect(g.batches).toEqual([[1]]);
        const later = batcher.submit(3);
        await Promise.resolve();
        expect(g.batches).toEqual([[1], [3]]);
        await g.releaseAll();
        expect(await later).toBe(30);
      } finally {
        vi.useRealTimers();
      }
    });

    it("an item answered in time keeps its answer past its deadline", async () => {
      const g = gated();
      const batcher = new Batcher(g.run, { maxInFlight: 1, maxBatch: 10, deadlineMs: 50 });
      const answer = batcher.submit(4);
      await Promise.resolve();
      await g.releaseAll();
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(await answer).toBe(40);
    });

    it("refuses a deadline that is not a positive integer", () => {
      for (const deadlineMs of [0, -1, 1.5, Number.NaN])
        expect(() => new Batcher(async () => [], { maxInFlight: 1, maxBatch: 1, deadlineMs })).toThrow("deadlineMs must be an integer");
    });
  });
});
