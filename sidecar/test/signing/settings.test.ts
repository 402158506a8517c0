import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/env.js";
import { autoSigningThreads, signingThreads } from "../../src/signing/settings.js";
import { cgroupCores, usableCores, type CgroupReader } from "../../src/signing/usable-cores.js";

/** A cgroup file system of these files. */
const files =
  (contents: Readonly<Record<string, string>>): CgroupReader =>
  (path) =>
    contents[path] ?? null;

describe("the cores a process may use", () => {
  it("cgroup v2: the smallest quota from the process's cgroup up to the root, rounded up", () => {
    const cg = { "/proc/self/cgroup": "0::/kubepods/pod1/ctr\n" };
    expect(cgroupCores(files({ ...cg, "/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max": "150000 100000\n" }))).toBe(2);
    expect(
      cgroupCores(
        files({
          ...cg,
          "/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max": "max 100000\n",
          "/sys/fs/cgroup/kubepods/pod1/cpu.max": "100000 100000\n",
          "/sys/fs/cgroup/cpu.max": "max 100000\n",
        }),
      ),
    ).toBe(1);
    // In a container the process's cgroup is the namespace's root.
    expect(cgroupCores(files({ "/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/cpu.max": "400000 100000\n" }))).toBe(4);
    expect(cgroupCores(files({ "/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/cpu.max": "max 100000\n" }))).toBeNull();
  });

  it("cgroup v1: the cpu controller's cfs quota over its period; -1 is none", () => {
    const v1 = "4:memory:/x\n2:cpu,cpuacct:/docker/abc\n0::/\n";
    expect(
      cgroupCores(
        files({
          "/proc/self/cgroup": v1,
          "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "50000\n",
          "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
        }),
      ),
    ).toBe(1);
    expect(
      cgroupCores(
        files({
          "/proc/self/cgroup": v1,
          "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "300000",
          "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000",
          "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1",
          "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000",
        }),
      ),
    ).toBe(3);
    expect(
      cgroupCores(
        files({ "/proc/self/cgroup": v1, "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1", "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000" }),
      ),
    ).toBeNull();
  });

  it("none outside Linux's cgroups; the affinity capped by the quota, never above it", () => {
    expect(cgroupCores(files({}))).toBeNull();
    expect(usableCores(16, null)).toBe(16);
    expect(usableCores(16, 2)).toBe(2);
    expect(usableCores(1, 4)).toBe(1);
    // This process: at most what its affinity allows (os.availableParallelism is sched_getaffinity).
    expect(usableCores()).toBeLessThanOrEqual(availableParallelism());
  });
});

describe("SERVICE_SIGNING_THREADS", () => {
  it("auto, the default: none on one or two cores (the event loop signs, as before), else two fewer than the cores, at most 2", () => {
    expect([1, 2, 3, 4, 16].map(autoSigningThreads)).toEqual([0, 0, 1, 2, 2]);
    expect(signingThreads({ SERVICE_SIGNING_THREADS: "auto" }, () => 1)).toBe(0);
    expect(signingThreads({ SERVICE_SIGNING_THREADS: "auto" }, () => 8)).toBe(2);
    expect(signingThreads({}, () => 1)).toBe(0);
    expect(signingThreads({}, () => 2)).toBe(0);
    expect(signingThreads({}, () => 3)).toBe(1);
    expect(signingThreads({}, () => 8)).toBe(2);
  });

  it("takes 0 to 64 as set, whatever the cores", () => {
    expect(signingThreads({ SERVICE_SIGNING_THREADS: "0" }, () => 8)).toBe(0);
    expect(signingThreads({ SERVICE_SIGNING_THREADS: "6" }, () => 1)).toBe(6);
  });

  it("refuses anything else with the range in the message", () => {
    for (const value of ["-1", "65", "two", "1.5", " "]) {
      expect(() => signingThreads({ SERVICE_SIGNING_THREADS: value })).toThrow(ConfigError);
    }
    expect(() => signingThreads({ SERVICE_SIGNING_THREADS: "65" })).toThrow(
      "SERVICE_SIGNING_THREADS must be `auto` or an integer from 0 to 64, not `65`",
    );
  });
});
