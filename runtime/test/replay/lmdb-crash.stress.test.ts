import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LmdbReplayStore } from "../../src/replay/lmdb-store.js";
import { startWorker, type Worker } from "./child.js";

/** Kills a run (REPLAY_CRASH_CYCLES for a longer one than CI's). */
const CYCLES = Number(process.env["REPLAY_CRASH_CYCLES"] ?? 30);

/** Small seeded PRNG (mulberry32), so a failing run can be replayed with REPLAY_CRASH_SEED. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Resolves once the worker acknowledged its first consume; fails if it ends first or none comes within 30 s. */
async function firstAck(w: Worker, context: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!w.lines.some((l) => l.startsWith("ack "))) {
    if (w.child.exitCode !== null || w.child.signalCode !== null)
      throw new Error(`${context}: the worker ended before its first ack: ${w.stderr()}`);
    if (Date.now() > deadline) throw new Error(`${context}: no consume acknowledged within 30 s`);
    await sleep(2);
  }
}

describe("LmdbReplayStore crash safety", () => {
  let dir: string;
  let worker: Worker | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-replay-crash-"));
  });
  afterEach(async () => {
    if (worker !== undefined && worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL");
    await worker?.closed;
    await rm(dir, { recursive: true, force: true });
  });

  it(`every acknowledged consume survives SIGKILL at random moments (${CYCLES} cycles)`, async () => {
    const seed = Number(process.env["REPLAY_CRASH_SEED"] ?? Date.now() % 2 ** 31);
    const random = prng(seed);
    const acknowledged: string[] = [];

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const w = startWorker("crash-worker.ts", [dir, `c${cycle}`, "4"]);
      worker = w;
      await w.waitForLine("ready");
      // The kill lands a random moment after the first acknowledgement, while the worker's consumes are under way:
      // counted from "ready", a loaded machine could kill a worker before its first fsync, and the cycle would test nothing.
      await firstAck(w, `seed ${seed} cycle ${cycle}`);
      await sleep(Math.floor(random() * 181));
      w.child.kill("SIGKILL");
      const exit = await w.closed;
      expect(exit, `seed ${seed} cycle ${cycle}: the worker must die by our SIGKILL, not by itself: ${w.stderr()}`).toEqual({
        code: null,
        signal: "SIGKILL",
      });
      acknowledged.push(...w.lines.filter((l) => l.startsWith("ack ")).map((l) => l.slice(4)));

      // A fresh store on the same directory, as after a restart: everything ever acknowledged is consumed.
      const store = new LmdbReplayStore(dir);
      const lost: string[] = [];
      for (const fp of acknowledged) if ((await store.read(fp))?.state !== "consumed") lost.push(fp);
      await store.close();
      expect(lost, `seed ${seed} cycle ${cycle}`).toEqual([]);
    }

    console.log(`crash: seed ${seed}, ${acknowledged.length} acknowledged consumes over ${CYCLES} kills`);
    // And the environment is still writable after the crashes.
    const store = new LmdbReplayStore(dir);
    const reserved = await store.reserve("after-the-crashes");
    expect(reserved.ok).toBe(true);
    await store.close();
  });
});
