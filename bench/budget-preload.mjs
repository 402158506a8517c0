/**
 * Loaded first into the sidecar that bench/budget.ts counts (`node --expose-gc --import`): what makes its count depend
 * on its requests only, not on the wall clock or on when a collection falls. Under valgrind a request takes ~50 times
 * as long as natively, and longer again on a loaded machine, so work done by the clock would weigh more or less per
 * request from one run to the next:
 * - intervals of ON_DEMAND_UP_TO_MS or less (the event-loop sampler, the record log's sequencing, the API-call count's
 *   save, the store's probe, the flush watchdog) do not run by the clock: each runs once when bench/budget.ts sends
 *   SIGUSR2, which it does at the end of every counted window, so a window holds its requests and one round of each
 *   (the window's records sequenced in one round, as at a few hundred requests a second), however long it took;
 *   TICKED is written to stderr TICK_SETTLE_MS later, once what the round started has finished;
 * - the event-loop monitor behind prom-client's default lag gauges samples every STRETCHED_MS instead of every 10 ms;
 * - SIGWINCH runs a full collection, then writes COLLECTED to stderr: bench/budget.ts sends it before each counted
 *   window and waits for the line, so every window starts from a collected heap.
 */
import perfHooks from "node:perf_hooks";

const ON_DEMAND_UP_TO_MS = 1_000;
const STRETCHED_MS = 1_000;
const TICK_SETTLE_MS = 1_500;
/** The lines bench/budget.ts waits for. */
const TICKED = "budget-preload: ticked";
const COLLECTED = "budget-preload: collected";
/** An on-demand interval's own timer never fires by itself (about 24 days). */
const NEVER_MS = 2 ** 31 - 1;

const setIntervalAsGiven = globalThis.setInterval;
const clearIntervalAsGiven = globalThis.clearInterval;
/** The on-demand intervals, by the (never-firing) timer their caller holds: it still unrefs and clears it as usual. */
const onDemand = new Map();

globalThis.setInterval = (callback, ms, ...args) => {
  if (!(typeof ms === "number" && ms <= ON_DEMAND_UP_TO_MS)) return setIntervalAsGiven(callback, ms, ...args);
  const timer = setIntervalAsGiven(() => undefined, NEVER_MS);
  onDemand.set(timer, () => callback(...args));
  return timer;
};
globalThis.clearInterval = (timer) => {
  onDemand.delete(timer);
  clearIntervalAsGiven(timer);
};

const monitorAsGiven = perfHooks.monitorEventLoopDelay;
perfHooks.monitorEventLoopDelay = (options) => monitorAsGiven({ ...options, resolution: STRETCHED_MS });

process.on("SIGUSR2", () => {
  for (const run of [...onDemand.values()]) run();
  setTimeout(() => process.stderr.write(`${TICKED}\n`), TICK_SETTLE_MS);
});

process.on("SIGWINCH", () => {
  globalThis.gc();
  process.stderr.write(`${COLLECTED}\n`);
});
