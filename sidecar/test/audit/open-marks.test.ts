import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { markIsStale, ownMark } from "../../src/audit/record-log/open-marks.js";

describe("open marks (which process has a data dir open)", () => {
  it("a process that runs is not stale; once it exits, its mark is", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      const mark = { ...ownMark(), pid: child.pid! };
      // Its own start time, as ownMark would have recorded it in that process.
      const own = { ...mark, started: mark.started === null ? null : await startedOf(child.pid!) };
      expect(markIsStale(own)).toBe(false);
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
      expect(markIsStale(own)).toBe(true);
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
});

async function startedOf(pid: number): Promise<string> {
  const { readFile } = await import("node:fs/promises");
  const boot = (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim();
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  return `${boot}:${stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]}`;
}
