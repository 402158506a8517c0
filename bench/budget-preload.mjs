/**
 * Loaded first into the sidecar that bench/budget.ts counts (`node --expose-gc --import`): what makes its count depend
 * on its requests only, not on the wall clock or on when a collection falls. Under valgrind a request takes ~50 times
 * as long as natively, so work done by the second weighs ~50 times more per request, and more again on a loaded
 * machine (a 10 ms timer fires fewer times while the loop is busy):
 * - intervals under STRETCH_BELOW_MS run every STRETCHED_MS, and so does the event-loop monitor behind prom-client's
 *   default lag gauges: the event-loop sampler (10 ms) fires 100 times less often, and the record log's sequencing
 *   (200 ms) takes in about as many records a round as it does at full speed at a few hundred requests a second; the
 *   work of a firing is unchanged;
 * - SIGUSR2 runs a full collection: bench/budget.ts sends it before each counted window, so every window starts from
 *   a collected heap and a major collection does not fall inside one window and not another.
 */
import perfHooks from "node:perf_hooks";

const STRETCH_BELOW_MS = 1_000;
const STRETCHED_MS = 1_000;

const setIntervalAsGiven = globalThis.setInterval;
globalThis.setInterval = (callback, ms, ...args) =>
  setIntervalAsGiven(callback, typeof ms === "number" && ms < STRETCH_BELOW_MS ? STRETCHED_MS : ms, ...args);

const monitorAsGiven = perfHooks.monitorEventLoopDelay;
perfHooks.monitorEventLoopDelay = (options) => monitorAsGiven({ ...options, resolution: STRETCHED_MS });

process.on("SIGUSR2", () => globalThis.gc());
