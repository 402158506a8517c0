/**
 * How long a thread was ready to run but waited for its core (the kernel's run-queue wait, /proc/<pid>/task/<tid>/schedstat),
 * sampled every SAMPLE_MS: a loop delay the thread's own CPU did not cause is one it spent waiting here.
 */
import { loopSchedule } from "../sidecar/load.js";

const SAMPLE_MS = 10;
/** The window the largest wait is reported over: about the event-loop delays the soak judges (50 ms and more). */
const WINDOW_MS = 100;

export interface CoreWait {
  /** Milliseconds the thread waited for its core, per second of the sampling. */
  readonly waitMsPerSecond: number;
  /** The most it waited within any WINDOW_MS (consecutive samples), ms. */
  readonly largestInWindowMs: number;
  /** Milliseconds it ran, per second. */
  readonly runMsPerSecond: number;
}

/** sidecar/load.ts `loopSchedule` of `pid`; null once it is gone. */
function schedule(pid: number): { readonly ran: number; readonly waited: number } | null {
  try {
    return loopSchedule(pid);
  } catch {
    return null;
  }
}

/** Samples the main thread of `pid` (its event loop, for node) until `stop()`; null where /proc has no schedstat. */
export function sampleCoreWait(pid: number): { stop(): CoreWait | null } {
  const first = schedule(pid);
  const startedAt = performance.now();
  const samples: { at: number; ran: number; waited: number }[] = [];
  const timer = setInterval(() => {
    const now = schedule(pid);
    if (now !== null) samples.push({ at: performance.now(), ...now });
  }, SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      const last = samples.at(-1);
      if (first === null || last === undefined) return null;
      const seconds = (performance.now() - startedAt) / 1000;
      // Two pointers: for each sample, the earliest one at most WINDOW_MS before it.
      let largest = 0;
      for (let i = 0, j = 0; i < samples.length; i++) {
        while (samples[i]!.at - samples[j]!.at > WINDOW_MS) j++;
        largest = Math.max(largest, samples[i]!.waited - samples[j]!.waited);
      }
      return {
        waitMsPerSecond: ((last.waited - first.waited) * 1000) / seconds,
        largestInWindowMs: largest * 1000,
        runMsPerSecond: ((last.ran - first.ran) * 1000) / seconds,
      };
    },
  };
}
