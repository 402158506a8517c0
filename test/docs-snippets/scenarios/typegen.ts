/** docs/sdk.md, "Typed signals": `writ typegen` of the shipped policies. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { withClone } from "../clone.js";
import type { Scenario } from "../types.js";

const TYPEGEN = { file: "docs/sdk.md", opens: "npx writ typegen policies --out src/writ-policies.ts" };

export const typegen: Scenario = {
  title: "docs/sdk.md, Typed signals: writ typegen writes the signals' types",
  blocks: [TYPEGEN],
  run: () =>
    withClone(async (clone) => {
      const { where } = await clone.block(TYPEGEN, { substitutions: [] });
      const types = readFileSync(join(clone.dir, "src/writ-policies.ts"), "utf8");
      expect(types, `${where}: the interfaces docs/sdk.md shows`).toContain("export interface PaymentsTransfer_1_2_0Signals");
      expect(types, `${where}: the interfaces docs/sdk.md shows`).toContain("export interface WritPolicies");
    }),
};
