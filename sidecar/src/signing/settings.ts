/**
 * `SERVICE_SIGNING_THREADS` (docs/sidecar.md, "Signing threads"): how many threads sign and self-verify, 0 for the
 * event loop itself, or `auto` (the default), from the cores the process may use (usable-cores.ts): none on one or two,
 * where a thread has no core of its own (the loop keeps one; the kernel's network work, LMDB's writer and the host's
 * other work want the second) and its hand-offs cost more than it saves; else two fewer than the cores, at most
 * MAX_AUTO_SIGNING_THREADS, which keep up with what one event loop decides.
 */
import { ConfigError, text, type Env } from "../env.js";
import { usableCores } from "./usable-cores.js";

export const SIGNING_THREADS_VARIABLE = "SERVICE_SIGNING_THREADS";
export const MAX_SIGNING_THREADS = 64;
export const MAX_AUTO_SIGNING_THREADS = 2;

export function autoSigningThreads(cores: number): number {
  return cores <= 2 ? 0 : Math.min(cores - 2, MAX_AUTO_SIGNING_THREADS);
}

/** @throws ConfigError when SERVICE_SIGNING_THREADS is neither `auto` nor an integer from 0 to MAX_SIGNING_THREADS */
export function signingThreads(env: Env, cores: () => number = usableCores): number {
  const value = text(env, SIGNING_THREADS_VARIABLE);
  if (value === undefined || value === "auto") return autoSigningThreads(cores());
  if (!/^[0-9]+$/.test(value) || Number(value) > MAX_SIGNING_THREADS) {
    throw new ConfigError(`${SIGNING_THREADS_VARIABLE} must be \`auto\` or an integer from 0 to ${MAX_SIGNING_THREADS}, not \`${value}\``);
  }
  return Number(value);
}
