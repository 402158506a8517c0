/**
 * The event-loop delay sampler behind `writ_event_loop_delay_*` and `/health`'s `event_loop_lag_ms`
 * (sidecar/src/observability/event-loop-delay.ts), on this process's real event loop: a stall is recorded once it
 * ends, counted before the timer runs again, and taken once by the max since the previous read.
 */
import { afterEach, describe, expect, it } from "vitest";
import { EventLoopDelay } from "../../src/observability/event-loop-delay.js";

const STALL_MS = 300;
const stall = () => {
  const until = performance.now() + STALL_MS;
  while (performance.now() < until);
};
const tick = () => new Promise((resolve) => setTimeout(resolve, 50));

const releases: (() => void)[] = [];
afterEach(() => releases.splice(0).forEach((release) => release()));

function sampler(): { delay: EventLoopDelay; recorded: number[] } {
  const recorded: number[] = [];
  const delay = new EventLoopDelay((ms) => recorded.push(ms));
  releases.push(delay.hold());
  return { delay, recorded };
}

describe("EventLoopDelay", () => {
  it("counts a stall that just ended in the max and the recent lag before its timer ran again, and records it once it runs", async () => {
    const { delay, recorded } = sampler();
    await tick();
    stall();
    // Synchronous: the timer cannot have run since the stall.
    expect(delay.recentMaxMs()).toBeGreaterThanOrEqual(STALL_MS - 50);
    expect(delay.takeMaxMs()).toBeGreaterThanOrEqual(STALL_MS - 50);
    expect(recorded.filter((ms) => ms >= STALL_MS - 50)).toHaveLength(0);
    await tick();
    expect(recorded.filter((ms) => ms >= STALL_MS - 50)).toHaveLength(1);
    // The max was taken with the stall in it: the next read does not report it again; the recent lag still does.
    expect(delay.takeMaxMs()).toBeLessThan(STALL_MS - 50);
    expect(delay.recentMaxMs()).toBeGreaterThanOrEqual(STALL_MS - 50);
  });

  it("reports a stall in the max of the next read when no read came between", async () => {
    const { delay } = sampler();
    await tick();
    delay.takeMaxMs();
    stall();
    await tick();
    expect(delay.takeMaxMs()).toBeGreaterThanOrEqual(STALL_MS - 50);
  });

  it("samples while held, and stops when every holder has released (a second release of one holder counts once)", async () => {
    const recorded: number[] = [];
    const delay = new EventLoopDelay((ms) => recorded.push(ms));
    const first = delay.hold();
    const second = delay.hold();
    first();
    first();
    await tick();
    expect(recorded.length).toBeGreaterThan(0);
    second();
    const count = recorded.length;
    await tick();
    expect(recorded).toHaveLength(count);
    // Stopped, it measures nothing: a stall now is not its delay.
    stall();
    expect(delay.recentMaxMs()).toBeLessThan(STALL_MS - 50);
  });
});
