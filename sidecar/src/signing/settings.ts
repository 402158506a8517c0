/**
 * `SERVICE_SIGNING_THREADS` (docs/sidecar.md, "Signing threads"): how many threads sign and self-verify, 0 for the
 * event loop itself. Its default follows the cores the process may use (usable-cores.ts): none with one core, where a
 * thread would only take turns with the loop it is meant to relieve; else one fewer than the cores (the loop keeps
 * one), at most MAX_DEFAULT_SIGNING_THREADS, which keep up with what one event loop decides.
 */
import { integer, text, type Env } from "../env.js";
import { usableCores } from "./usable-cores.js";

export const SIGNING_THREADS_VARIABLE = "SERVICE_SIGNING_THREADS";
export const MAX_SIGNING_THREADS = 64;
export const MAX_DEFAULT_SIGNING_THREADS = 2;

export function defaultSigningThreads(cores: number): number {
  return cores <= 1 ? 0 : Math.min(cores - 1, MAX_DEFAULT_SIGNING_THREADS);
}

/** @throws ConfigError when SERVICE_SIGNING_THREADS is not an integer from 0 to MAX_SIGNING_THREADS */
export function signingThreads(env: Env, cores: () => number = usableCores): number {
  if (text(env, SIGNING_THREADS_VARIABLE) === undefined) return defaultSigningThreads(cores());
  return integer(env, SIGNING_THREADS_VARIABLE, 0, 0, MAX_SIGNING_THREADS);
}
