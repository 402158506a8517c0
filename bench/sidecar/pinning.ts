/**
 * One core each (docs/benchmarks.md, "Sidecar"): with BENCH_PIN (default on where the machine has 2 cores or more), the
 * servers a run starts run on SERVER_CORE (`taskset -c`, which execs them: their pids stay theirs) and this process,
 * the load generator, on LOAD_CORE, every thread of it. Unpinned, a server's other threads and the load generator
 * take turns on both cores, and a multi-threaded server (Cerbos's Go runtime) gets more of the machine than an event
 * loop does.
 */
import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";

const LOAD_CORE = 0;
const SERVER_CORE = 1;

/** The `taskset -c` list the servers started from now on run on; null: not pinned. */
let serverCores: string | null = null;

/** Pins this process to LOAD_CORE and what `pinned` starts from now on to SERVER_CORE; says which, or why not. */
export function pinOneCoreEach(env: NodeJS.ProcessEnv = process.env): string {
  const wanted = env["BENCH_PIN"] ?? (availableParallelism() >= 2 ? "1" : "0");
  if (wanted !== "1") return "not pinned (BENCH_PIN=1 pins the servers to one core and the load generator to another)";
  if (availableParallelism() < 2) throw new Error("BENCH_PIN=1 needs two cores or more");
  execFileSync("taskset", ["-a", "-p", "-c", String(LOAD_CORE), String(process.pid)], { stdio: "ignore" });
  serverCores = String(SERVER_CORE);
  return `pinned: each server on core ${SERVER_CORE}, the load generator on core ${LOAD_CORE} (BENCH_PIN=0 does not pin)`;
}

/**
 * The per-host mode's pinning (bench/sidecar/per-host.ts): what `pinned` starts from now on runs on `servers` and this
 * process, the load generator, on `load` (`taskset -c` lists, e.g. `0-1`; they may overlap).
 */
export function pinServersAndLoad(servers: string, load: string): void {
  execFileSync("taskset", ["-a", "-p", "-c", load, String(process.pid)], { stdio: "ignore" });
  serverCores = servers;
}

/** `command` with `args`, through `taskset` onto the servers' cores once `pinOneCoreEach` or `pinServersAndLoad` pinned. */
export function pinned(command: string, args: readonly string[]): [string, string[]] {
  return serverCores === null ? [command, [...args]] : ["taskset", ["-c", serverCores, command, ...args]];
}
