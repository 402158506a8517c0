import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { markIsStale, markOf, ownMark } from "../../src/audit/record-log/open-marks.js";
import { endUnreaped, killIntoZombie, startUnreaped } from "../support/unreaped.js";

describe("open marks (which process has a data dir open)", () => {
  it("a process that runs is not stale; once it exits, its mark is", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      // The mark the child would leave: its own start time, as ownMark records it in that process.
      const mark = markOf(child.pid!);
      expect(markIsStale(mark)).toBe(false);
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
      expect(markIsStale(mark)).toBe(true);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("a mark of this process's id left under another key, of another host, or of a reused process id is stale", () => {
    const mine = ownMark();
    expect(mine.host).toBe(hostname());
    expect(markIsStale(mine)).toBe(true);
    expect(markIsStale({ ...mine, pid: process.ppid, host: `${hostname()}-elsewhere` })).toBe(true);
    if (mine.started !== null) expect(markIsStale({ ...mine, pid: process.ppid, started: `${mine.started}0` })).toBe(true);
  });

  it("the mark of a process that is a zombie (dead, not reaped) is stale", async () => {
    const child = await startUnreaped(process.execPath, ["-e", "setInterval(() => {}, 60000)"]);
    try {
      const mark = markOf(child.pid);
      expect(mark.started).not.toBeNull();
      expect(markIsStale(mark)).toBe(false);
      await killIntoZombie(child.pid);
      expect(markIsStale(mark)).toBe(true);
    } finally {
      await endUnreaped(child);
    }
  });
});
