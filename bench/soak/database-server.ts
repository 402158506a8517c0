/**
 * The PostgreSQL server on this host, by its processes: moved to the load's cores for a run (BENCH_SOAK_DATABASE_CPUS),
 * as a fleet's database runs on hosts of its own, and what CPU its processes used.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { SoakSettings } from "./settings.js";
import { cpuSecondsIn, statFields } from "../sidecar/load.js";
import { admin } from "./store.js";

const LOCAL_HOSTS: readonly string[] = ["", "localhost", "127.0.0.1", "[::1]"];

export interface DatabaseServer {
  /** The postmaster's process id. */
  readonly pid: number;
  /**
   * Starts counting its processes' CPU; `stop()` gives the seconds used since by those alive then (one started meanwhile
   * counted whole, one that ended meanwhile not at all: the sidecar's pooled backends live through a run).
   */
  measure(): { stop(): number };
  /**
   * Moves the postmaster and every child to `cpus` (backends it starts later inherit them); the undo.
   * @throws Error when the postmaster's cores did not change (not allowed to move another user's processes)
   */
  pin(cpus: string): () => void;
}

/** The parent of process `pid` and its CPU seconds (load.ts `statFields`); null once it is gone. */
function stat(pid: number): { readonly parent: number; readonly cpuSeconds: number } | null {
  try {
    const field = statFields(`/proc/${pid}/stat`);
    return { parent: field(4), cpuSeconds: cpuSecondsIn(field) };
  } catch {
    return null;
  }
}

function children(parent: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (Number.isInteger(pid) && stat(pid)?.parent === parent) out.push(pid);
  }
  return out;
}

function affinity(pid: number): string {
  const text = execFileSync("taskset", ["-p", "-c", String(pid)], { encoding: "utf8" });
  return text.slice(text.lastIndexOf(":") + 1).trim();
}

/** The CPUs of a taskset list (`0,2-3`). */
function cpuSet(list: string): Set<number> {
  const cpus = new Set<number>();
  for (const part of list.split(",")) {
    const [from, to = from] = part.split("-").map(Number);
    for (let cpu = from!; cpu <= to!; cpu++) cpus.add(cpu);
  }
  return cpus;
}

const sameCpus = (a: string, b: string) => {
  const [x, y] = [cpuSet(a), cpuSet(b)];
  return x.size === y.size && [...x].every((cpu) => y.has(cpu));
};

function setAffinity(pid: number, cpus: string): void {
  try {
    execFileSync("taskset", ["-a", "-p", "-c", cpus, String(pid)], { stdio: "ignore" });
  } catch {
    // Gone since it was listed (a backend whose client left): nothing to move.
  }
}

/** The server of `settings.postgresUrl` when it runs on this host and its data directory is readable here; else null. */
export async function localDatabaseServer(settings: SoakSettings): Promise<DatabaseServer | null> {
  if (!LOCAL_HOSTS.includes(new URL(settings.postgresUrl).hostname)) return null;
  const directory = await admin(
    settings,
    async (client) => (await client.query<{ data_directory: string }>("SHOW data_directory")).rows[0]!.data_directory,
  );
  let pid: number;
  try {
    pid = Number(readFileSync(join(directory, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || stat(pid) === null) return null;
  return {
    pid,
    measure() {
      const used = () => new Map([pid, ...children(pid)].map((p) => [p, stat(p)?.cpuSeconds ?? 0]));
      const before = used();
      return {
        stop: () => [...used()].reduce((sum, [p, seconds]) => sum + seconds - (before.get(p) ?? 0), 0),
      };
    },
    pin(cpus) {
      const before = affinity(pid);
      for (const p of [pid, ...children(pid)]) setAffinity(p, cpus);
      if (!sameCpus(affinity(pid), cpus))
        throw new Error(
          `could not move the PostgreSQL server (pid ${pid}) to cpus ${cpus}: run as root or its user, or set BENCH_SOAK_DATABASE_CPUS=off`,
        );
      return () => {
        for (const p of [pid, ...children(pid)]) setAffinity(p, before);
      };
    },
  };
}
