/**
 * How many cores this process may use (docs/sidecar.md, "Signing threads"): the CPUs of its affinity mask
 * (`os.availableParallelism()`, which is sched_getaffinity on Linux: `taskset` and a container's cpuset count), and
 * no more than its cgroup's CPU quota allows, rounded up (`docker --cpus=1.5` is 2). The host's count never: a
 * sidecar limited to one core of a 16-core host has one.
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/** Reads a file of the cgroup file system, or null when it is not there (another cgroup version, not Linux). */
export type CgroupReader = (path: string) => string | null;

const readCgroupFile: CgroupReader = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
};

/** Cores a quota of `quota` µs per `period` µs gives, rounded up; null for no quota (`max`, -1) or nonsense. */
function quotaCores(quota: string, period: string): number | null {
  const q = Number(quota);
  const p = Number(period);
  if (!Number.isFinite(q) || !Number.isFinite(p) || q <= 0 || p <= 0) return null;
  return Math.max(1, Math.ceil(q / p));
}

/**
 * The cgroup's CPU quota in cores, or null when none limits the process. v2: `cpu.max` (`<quota> <period>` or
 * `max <period>`) of the process's own cgroup and of each parent up to the root, the smallest; v1: `cpu.cfs_quota_us`
 * and `cpu.cfs_period_us` of its `cpu` controller's cgroup (in a container, mounted at the controller's root).
 */
export function cgroupCores(read: CgroupReader = readCgroupFile): number | null {
  const membership = read("/proc/self/cgroup") ?? "";
  let smallest: number | null = null;
  const keep = (cores: number | null) => {
    if (cores !== null && (smallest === null || cores < smallest)) smallest = cores;
  };
  for (const line of membership.split("\n")) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line.trim()) ?? [];
    if (path === undefined) continue;
    if (controllers === "") {
      // v2: the quota of every cgroup from the process's up to the root applies.
      for (let dir = path; ; dir = dir.slice(0, dir.lastIndexOf("/"))) {
        const [quota, period] = (read(`/sys/fs/cgroup${dir === "/" ? "" : dir}/cpu.max`) ?? "").trim().split(/\s+/);
        if (quota !== undefined && period !== undefined) keep(quotaCores(quota, period));
        if (dir === "" || dir === "/") break;
      }
    } else if (controllers!.split(",").includes("cpu")) {
      for (const root of ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]) {
        for (const dir of new Set([path === "/" ? "" : path, ""])) {
          const quota = read(`${root}${dir}/cpu.cfs_quota_us`);
          const period = read(`${root}${dir}/cpu.cfs_period_us`);
          if (quota !== null && period !== null) keep(quotaCores(quota.trim(), period.trim()));
        }
      }
    }
  }
  return smallest;
}

/** The cores this process may use: its affinity, capped by its cgroup's quota. */
export function usableCores(affinity: number = availableParallelism(), quota: number | null = cgroupCores()): number {
  return quota === null ? affinity : Math.max(1, Math.min(affinity, quota));
}
