/**
 * Which process has an LMDB data dir open (storage/lmdb/record-log-storage.ts, "open marks"): a mark names the process so that a later
 * one can tell a process that still runs (another sidecar on the same data dir) from one that crashed with records in
 * memory. On Linux a mark holds the boot id and the process's start time besides its id, so a process id reused after
 * a restart (a container's sidecar is often the same small pid every time) is not taken for the crashed one, and a
 * zombie (a process that died and that its parent has not reaped yet, or never will) is gone: it runs no more code and
 * holds no file. Whether a live sidecar holds the data dir is the kernel's lock first (data-dir-lock.ts); a mark decides
 * it for a process of a writ release that took no lock, and tells which processes crashed.
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";

export interface OpenMark {
  readonly pid: number;
  readonly host: string;
  /** `<boot id>:<start time in clock ticks>` from /proc; null where /proc is not there. */
  readonly started: string | null;
  /**
   * Of a process of a sidecar of several (SERVICE_PROCESSES): its supervisor (`groupOf`), which its siblings share; they
   * may have the data dir open together.
   */
  readonly group?: string;
}

/** The mark of this process; `group`: its supervisor's `groupOf`, for a process of a sidecar of several. */
export function ownMark(group: string | null = null): OpenMark {
  const mark = markOf(process.pid);
  return group === null ? mark : { ...mark, group };
}

/** What names process `pid` of this host as the supervisor of a sidecar's processes: its mark, as text. */
export function groupOf(pid: number): string {
  const { host, started } = markOf(pid);
  return `${pid}@${host}:${started ?? "?"}`;
}

/** The mark process `pid` of this host would leave. */
export function markOf(pid: number): OpenMark {
  return { pid, host: hostname(), started: startedAt(pid) };
}

/** Whether the process that left `mark` is gone: on another host (LMDB is not shared across hosts), or no longer running here. */
export function markIsStale(mark: OpenMark): boolean {
  if (mark.host !== hostname()) return true;
  if (mark.pid === process.pid) return true;
  if (mark.started !== null) return startedAt(mark.pid) !== mark.started;
  try {
    process.kill(mark.pid, 0);
    return false;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code !== "EPERM";
  }
}

/** The process a mark names, for an operator: `process 1234 on host-a`. */
export function describeMark(mark: OpenMark): string {
  return `process ${mark.pid} on ${mark.host}`;
}

let bootId: string | null | undefined;
/** The states of /proc/<pid>/stat of a process that has died: a zombie (Z), and dead (X, seen only as it goes). */
const DIED = new Set(["Z", "X"]);

/** `<boot id>:<start time>` of process `pid` while it runs; null when it has died or /proc cannot tell. */
function startedAt(pid: number): string | null {
  try {
    bootId ??= readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 3 (state) and field 22 (starttime), counted after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return DIED.has(fields[0]!) ? null : `${bootId}:${fields[19]}`;
  } catch {
    return null;
  }
}
