import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SecurityEventLimiter } from "../../src/audit/security-event-limiter.js";
import type { SecurityEventInput } from "../../src/audit/types.js";

const event = (ip: string, type: SecurityEventInput["type"] = "authentication_failed"): SecurityEventInput => ({
  type,
  method: "GET",
  path: "/audit/stats",
  ip,
  detail: "Bearer key does not match",
});

describe("SecurityEventLimiter", () => {
  it("writes the first event of a source in an interval, and counts the rest into one aggregate", () => {
    const limiter = new SecurityEventLimiter({ intervalMs: 1_000, maxSources: 10 });
    expect(limiter.admit(event("10.0.0.1"), 0)).toBe(true);
    for (let t = 1; t < 200; t++) expect(limiter.admit(event("10.0.0.1"), t)).toBe(false);
    // Another type, another source: written at once.
    expect(limiter.admit(event("10.0.0.1", "replay_attempt"), 300)).toBe(true);
    expect(limiter.admit(event("10.0.0.2"), 300)).toBe(true);
    expect(limiter.drain(999)).toEqual([]);
    const [aggregate, ...rest] = limiter.drain(1_000);
    expect(rest).toEqual([]);
    expect(aggregate).toMatchObject({ count: 199, event: { type: "authentication_failed", ip: "10.0.0.1", path: "/audit/stats" } });
    expect(aggregate?.event.detail).toContain("199 more like this");
    // A new interval: written at once again.
    expect(limiter.admit(event("10.0.0.1"), 1_001)).toBe(true);
  });

  it("keys by source, not path: varying the path does not escape aggregation", () => {
    const limiter = new SecurityEventLimiter({ intervalMs: 1_000, maxSources: 10 });
    expect(limiter.admit({ ...event("10.0.0.1"), path: "/a" }, 0)).toBe(true);
    expect(limiter.admit({ ...event("10.0.0.1"), path: "/b" }, 1)).toBe(false);
  });

  it("beyond maxSources, counts further sources in one overflow row per type", () => {
    const limiter = new SecurityEventLimiter({ intervalMs: 1_000, maxSources: 3 });
    const written = Array.from({ length: 50 }, (_, i) => limiter.admit(event(`10.0.0.${i}`), i)).filter(Boolean);
    expect(written).toHaveLength(3);
    expect(limiter.drain(0, true)).toEqual([
      expect.objectContaining({ count: 47, event: expect.objectContaining({ ip: "*", path: "*" }) }),
    ]);
  });

  it("counts every event exactly once: written, or in one aggregate (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 50 })), { maxLength: 300 }), (events) => {
        const limiter = new SecurityEventLimiter({ intervalMs: 10, maxSources: 3 });
        let written = 0;
        let aggregated = 0;
        let now = 0;
        for (const [source, step] of events) {
          now += step;
          if (limiter.admit(event(`10.0.0.${source}`), now)) written += 1;
          aggregated += limiter.drain(now).reduce((sum, a) => sum + a.count, 0);
        }
        aggregated += limiter.drain(now, true).reduce((sum, a) => sum + a.count, 0);
        expect(written + aggregated).toBe(events.length);
      }),
    );
  });
});
