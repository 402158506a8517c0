/**
 * A bundle whose policy reads calendar fields carries its zone tables in policy.ir.json, so `bundle_hash` pins them:
 * a table changed after compiling is refused as tampered (BUNDLE_TAMPERED), and a bundle written with a malformed
 * table (unsorted, outside its horizon, missing) is refused when it is loaded (BUNDLE_INVALID), naming the zone.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUNDLE_FILES, BundleError, loadBundle, serializeIr, serializeJson, type IrZones, type PolicyIr } from "../../src/index.js";
import { TRANSFER_IR, writeTransferBundle } from "../support/bundle.js";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const at = (iso: string): number => Date.parse(iso) / 1000;
const ZONES: IrZones = {
  tzdata: "2025c",
  horizon: [0, 4_102_444_800],
  tables: {
    "Europe/London": [
      [0, 3600],
      [at("1971-10-31T02:00:00Z"), 0],
      [at("2026-03-29T01:00:00Z"), 3600],
      [at("2026-10-25T01:00:00Z"), 0],
    ],
  },
};

/** The transfer policy with a first rule rejecting weekends in London. */
function withWeekend(zones: unknown): PolicyIr {
  const weekend = {
    id: "weekend",
    verdict: "reject" as const,
    reason: "not at weekends",
    when: {
      op: "cmp" as const,
      cmp: "ge" as const,
      kind: "number" as const,
      left: {
        op: "calendar" as const,
        fn: "weekday" as const,
        arg: { op: "signal" as const, name: "requested_at" },
        zone: "Europe/London",
      },
      right: { op: "lit" as const, value: 6 },
    },
  };
  return {
    ...TRANSFER_IR,
    irVersion: 2,
    signals: { ...TRANSFER_IR.signals, requested_at: { type: "timestamp", optional: false } },
    rules: [weekend, ...TRANSFER_IR.rules],
    zones: zones as IrZones,
  };
}

async function load(ir: PolicyIr, tamper?: (text: string) => string): Promise<unknown> {
  const root = writeTransferBundle({ ir });
  roots.push(root);
  if (tamper) {
    const file = join(root, TRANSFER_IR.policyId, TRANSFER_IR.version, BUNDLE_FILES.ir);
    writeFileSync(file, tamper(readFileSync(file, "utf8")));
  }
  return loadBundle(root, TRANSFER_IR.policyId, TRANSFER_IR.version).then(
    (b) => b,
    (err: unknown) => err,
  );
}

describe("a bundle with zone tables", () => {
  it("loads, and decides by its own table", async () => {
    const bundle = (await load(withWeekend(ZONES))) as Awaited<ReturnType<typeof loadBundle>>;
    const decide = (t: string) => bundle.policy.evaluate({ amount: 5, currency: "EUR", requested_at: t });
    expect(decide("2026-06-06T12:00:00Z")).toMatchObject({ decided: true, ruleId: "weekend" });
    expect(decide("2026-06-08T12:00:00Z")).toMatchObject({ decided: true, ruleId: "small" });
  });

  it("is refused as tampered when a transition is moved after compiling", async () => {
    const moved = String(at("2026-03-29T01:00:00Z"));
    const e = await load(withWeekend(ZONES), (text) => text.replace(moved, String(Number(moved) + 3600)));
    expect(e).toBeInstanceOf(BundleError);
    expect(e).toMatchObject({ code: "BUNDLE_TAMPERED", message: "file `policy.ir.json` does not match its hash in the manifest" });
  });

  it.each([
    [
      "unsorted",
      {
        ...ZONES,
        tables: {
          "Europe/London": [
            [0, 3600],
            [at("2026-10-25T01:00:00Z"), 0],
            [at("2026-03-29T01:00:00Z"), 3600],
          ],
        },
      },
      "not sorted",
    ],
    ["past its horizon", { ...ZONES, horizon: [0, at("2000-01-01T00:00:00Z")] }, "not sorted within the horizon"],
    ["not starting at the horizon", { ...ZONES, tables: { "Europe/London": ZONES.tables["Europe/London"]!.slice(1) } }, "not sorted"],
    ["missing", { ...ZONES, tables: {} }, "zone `Europe/London` has no table in the IR's `zones`"],
    ["with an offset beyond 26 hours", { ...ZONES, tables: { "Europe/London": [[0, 360_000]] } }, "malformed pair at 0"],
    ["absent altogether", undefined, "zone `Europe/London` has no table"],
  ])("is refused when a table is %s (BUNDLE_INVALID)", async (_what, zones, message) => {
    const e = await load(withWeekend(zones));
    expect(e).toBeInstanceOf(BundleError);
    expect((e as BundleError).code).toBe("BUNDLE_INVALID");
    expect((e as BundleError).message).toContain("bundle cannot be prepared: ");
    expect((e as BundleError).message).toContain(message);
  });

  it("writes each pair of a table on a line of its own, and an IR without zones as any bundle file", () => {
    const text = serializeIr(withWeekend(ZONES));
    expect(text).toContain(
      '"horizon": [0, 4102444800],\n    "tables": {\n      "Europe/London": [\n        [0, 3600],\n        [57722400, 0],\n',
    );
    expect(JSON.parse(text)).toEqual(withWeekend(ZONES));
    expect(serializeIr(TRANSFER_IR)).toBe(serializeJson(TRANSFER_IR));
  });
});
