/**
 * The replay store of Surface B's own authorizer on a store that commits a decision with its record
 * (surface-b/unit-replay.ts): each operation goes to the unit running for its fingerprint, and the units of one
 * fingerprint run one after another, those of different fingerprints at once.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { MemoryReplayStore } from "@writ/runtime";
import { UnitReplayStore } from "../../src/surface-b/unit-replay.js";

describe("UnitReplayStore", () => {
  it("sends each operation to the unit running for its fingerprint", async () => {
    const units = new UnitReplayStore();
    const [a, b] = [new MemoryReplayStore(), new MemoryReplayStore()];
    await Promise.all([units.run("fp-a", a, () => units.consume("fp-a")), units.run("fp-b", b, () => units.consume("fp-b"))]);
    expect([await a.read("fp-a"), await a.read("fp-b")].map((e) => e?.state ?? null)).toEqual(["consumed", null]);
    expect([await b.read("fp-b"), await b.read("fp-a")].map((e) => e?.state ?? null)).toEqual(["consumed", null]);
  });

  it("runs the units of one fingerprint one after another, of different ones at once", async () => {
    const units = new UnitReplayStore();
    const events: string[] = [];
    const unit = (fp: string, name: string) =>
      units.run(fp, new MemoryReplayStore(), async () => {
        events.push(`${name} start`);
        await sleep(20);
        events.push(`${name} end`);
      });
    await Promise.all([unit("fp", "1"), unit("fp", "2"), unit("other", "3"), unit("fp", "4")]);
    expect(events.filter((e) => !e.startsWith("3"))).toEqual(["1 start", "1 end", "2 start", "2 end", "4 start", "4 end"]);
    expect(events.indexOf("3 start")).toBeLessThan(events.indexOf("1 end"));
  });

  it("a unit that fails ends as well: the next of its fingerprint runs", async () => {
    const units = new UnitReplayStore();
    await expect(units.run("fp", new MemoryReplayStore(), async () => Promise.reject(new Error("failed")))).rejects.toThrow("failed");
    expect((await units.run("fp", new MemoryReplayStore(), () => units.consume("fp"))).ok).toBe(true);
  });

  it("an operation with no unit running for its fingerprint is refused", async () => {
    await expect(new UnitReplayStore().consume("fp")).rejects.toThrow("no execution unit runs for fingerprint `fp`");
  });
});
