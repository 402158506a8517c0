/**
 * The ReplayStore contract (runtime/src/replay/store.ts, spec 2.12, docs/replay.md) as one suite that every
 * implementation runs: `replayStoreContract("memory", factory)`. Time is passed explicitly through the `now`
 * parameters; nothing sleeps. Its cases: replay-contract-transitions.ts, replay-contract-expiry.ts,
 * replay-contract-consumption.ts; what they share: replay-contract-support.ts.
 */
import { afterEach, beforeEach, describe } from "vitest";
import { consumptionCases } from "./replay-contract-consumption.js";
import { expiryCases } from "./replay-contract-expiry.js";
import type { StoreHarness } from "./replay-contract-support.js";
import { transitionCases } from "./replay-contract-transitions.js";

export function replayStoreContract(label: string, create: () => Promise<StoreHarness>): void {
  describe(`ReplayStore contract: ${label}`, () => {
    let harness: StoreHarness;

    beforeEach(async () => {
      harness = await create();
    });
    afterEach(async () => {
      await harness.store.close();
      await harness.dispose();
    });

    transitionCases(() => harness);
    expiryCases(() => harness);
    consumptionCases(() => harness);
  });
}
