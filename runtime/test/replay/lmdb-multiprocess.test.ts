import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LmdbReplayStore } from "../../src/replay/lmdb-store.js";
import { startWorker, type Worker } from "./child.js";

const FINGERPRINTS = 600;

describe("LmdbReplayStore across processes", () => {
  let dir: string;
  let workers: Worker[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-replay-race-"));
  });
  afterEach(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
    await Promise.all(workers.map((w) => w.closed));
    workers = [];
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ["reserves", "reserve", "reserve"],
    // A consume of a fingerprint this process's set does not hold reads nothing (docs/replay.md, "The fingerprint set"):
    // the other process's entries must still refuse it, through the log's head.
    ["consumes", "consume", "consume"],
    ["consumes against reserves", "consume", "reserve"],
  ])("two processes racing 1,200 %s each over the same 600 fingerprints: each is won exactly once", async (_, a, b) => {
    workers = [
      startWorker("race-worker.ts", [dir, String(FINGERPRINTS), a]),
      startWorker("race-worker.ts", [dir, String(FINGERPRINTS), b]),
    ];
    await Promise.all(workers.map((w) => w.waitForLine("ready")));
    for (const w of workers) w.child.stdin.write("go\n");
    const exits = await Promise.all(workers.map((w) => w.closed));
    exits.forEach((exit, i) => expect(exit, workers[i]?.stderr()).toEqual({ code: 0, signal: null }));

    const reports = workers.map((w) => JSON.parse(w.lines.at(-1) ?? "null") as { wins: Array<[string, string]>; attempts: number });
    const winners = new Map<string, Array<{ worker: number; token: string }>>();
    reports.forEach((report, worker) => {
      expect(report.attempts).toBe(2 * FINGERPRINTS);
      for (const [fp, token] of report.wins) winners.set(fp, [...(winners.get(fp) ?? []), { worker, token }]);
    });
    expect(winners.size).toBe(FINGERPRINTS);
    const twice = [...winners].filter(([, w]) => w.length !== 1);
    expect(twice).toEqual([]);

    // The stored entry carries the token of the one winner.
    const store = new LmdbReplayStore(dir);
    for (const [fp, [win]] of winners) expect((await store.read(fp))?.token, fp).toBe(win?.token);
    await store.close();
    console.log(`race: worker 0 won ${reports[0]?.wins.length}, worker 1 won ${reports[1]?.wins.length} of ${FINGERPRINTS}`);
  });
});
