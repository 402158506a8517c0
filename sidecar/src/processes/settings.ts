/**
 * `SERVICE_PROCESSES` (docs/sidecar.md, "Several processes"): how many sidecar processes serve one configuration
 * behind its ports, each with an event loop of its own; 1 (the default) is one process, as before; `auto` follows the
 * cores the process may use (signing/usable-cores.ts). `WRIT_SIDECAR_PROCESS` is set by the sidecar itself: which of
 * its processes a process is.
 */
import { ConfigError, text, type Env } from "../env.js";
import { usableCores } from "../signing/usable-cores.js";

export const PROCESSES_VARIABLE = "SERVICE_PROCESSES";
export const MAX_PROCESSES = 64;
/** Set by the supervisor in each process it starts: the process's index, 0 to the count less one. */
export const PROCESS_INDEX_VARIABLE = "WRIT_SIDECAR_PROCESS";

/** @throws ConfigError when SERVICE_PROCESSES is neither `auto` nor an integer from 1 to MAX_PROCESSES */
export function processCount(env: Env, cores: () => number = usableCores): number {
  const value = text(env, PROCESSES_VARIABLE);
  if (value === undefined) return 1;
  if (value === "auto") return Math.min(cores(), MAX_PROCESSES);
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || Number(value) > MAX_PROCESSES) {
    throw new ConfigError(`${PROCESSES_VARIABLE} must be \`auto\` or an integer from 1 to ${MAX_PROCESSES}, not \`${value}\``);
  }
  return Number(value);
}

/** The cores each of `count` processes counts as its own, of `cores` usable ones (at least one). */
export const coresPerProcess = (cores: number, count: number): number => Math.max(1, Math.floor(cores / count));

/** This process's index among the sidecar's processes (set by the supervisor), null for a sidecar of one process. */
export function processIndex(env: Env, count: number): number | null {
  const value = text(env, PROCESS_INDEX_VARIABLE);
  if (value === undefined || count === 1) return null;
  if (!/^[0-9]+$/.test(value) || Number(value) >= count) {
    throw new ConfigError(
      `${PROCESS_INDEX_VARIABLE} is set by the sidecar for its processes: \`${value}\` is not one of 0 to ${count - 1}`,
    );
  }
  return Number(value);
}
