/**
 * Random sequences of transitions, expiries and sweeps, run on each in-process store and on a model that is nothing but
 * lifecycle.ts's `decide*` functions over a Map, with a sweep that looks at every entry (the obviously right one): every
 * answer, every sweep's count and every stored entry must agree, and the LMDB store's expiry index must hold exactly
 * the stored entries that expire (lmdb-expiry-index.ts). Short TTLs on a clock that moves in small steps, over a few
 * fingerprints, so that entries expire, are taken over, swept and expired in every order.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { open } from "lmdb";
import { describe, expect, it } from "vitest";
import {
  decideConfirm,
  decideConsume,
  decideFail,
  decideMarkPendingOverride,
  decideReserve,
  decideResolveOverride,
  decideStartExecution,
  isExpired,
  type Transition,
} from "../../src/replay/lifecycle.js";
import { LmdbReplayStore } from "../../src/replay/lmdb-store.js";
import { MemoryReplayStore } from "../../src/replay/memory-store.js";
import type { ReplayEntry, ReplayResult, ReplayStore } from "../../src/replay/store.js";
import { T0 } from "../../src/testing/replay-contract-support.js";
import { expectedIndex, storedIndex } from "./lmdb-support.js";

const FINGERPRINTS = ["a", "b", "c", "d"] as const;

type Step =
  | { readonly op: "reserve"; readonly fp: string; readonly ttl: number; readonly dt: number }
  | { readonly op: "consume"; readonly fp: string; readonly pending: boolean; readonly dt: number }
  | { readonly op: "startExecution" | "confirm" | "markPendingOverride"; readonly fp: string; readonly right: boolean; readonly dt: number }
  | { readonly op: "fail"; readonly fp: string; readonly right: boolean; readonly ttl: number; readonly dt: number }
  | { readonly op: "resolveOverride"; readonly fp: string; readonly right: boolean; readonly approved: boolean; readonly dt: number }
  | { readonly op: "expire"; readonly fp: string; readonly dt: number }
  | { readonly op: "sweep"; readonly dt: number };

const fp = fc.constantFrom(...FINGERPRINTS);
/** How far the clock moves before the step: often not at all, sometimes past every TTL. */
const dt = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10 }), fc.integer({ min: 10, max: 60 }));
/** Mostly the entry's own token, sometimes another. */
const right = fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("reserve" as const), fp, ttl: fc.integer({ min: 1, max: 40 }), dt }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("consume" as const), fp, pending: fc.boolean(), dt }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constantFrom("startExecution" as const, "confirm" as const, "markPendingOverride" as const),
      fp,
      right,
      dt,
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("fail" as const), fp, right, ttl: fc.integer({ min: 0, max: 40 }), dt }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("resolveOverride" as const), fp, right, approved: fc.boolean(), dt }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("expire" as const), fp, dt }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("sweep" as const), dt }) },
);
const steps = fc.array(step, { minLength: 1, maxLength: 40 });

/** The reference: lifecycle.ts's decisions over a Map, and a sweep that looks at every entry. */
class Model {
  readonly entries = new Map<string, ReplayEntry>();

  apply(fingerprint: string, t: Transition): ReplayResult {
    if (t.next !== undefined) this.entries.set(fingerprint, t.next);
    return t.result;
  }

  expire(fingerprint: string, now: number): boolean {
    const entry = this.entries.get(fingerprint);
    return entry !== undefined && isExpired(entry, now) && this.entries.delete(fingerprint);
  }

  sweep(now: number): number {
    let removed = 0;
    for (const [fingerprint, entry] of this.entries) if (isExpired(entry, now) && this.entries.delete(fingerprint)) removed += 1;
    return removed;
  }
}

/** Runs `plan` on `store` and on the model side by side; `check` looks beneath the store after each step. */
async function agree(store: ReplayStore, plan: readonly Step[], check: () => Promise<void> = async () => undefined): Promise<void> {
  const model = new Model();
  let now = T0;
  for (const [i, s] of plan.entries()) {
    now += s.dt;
    const at = `step ${i}: ${JSON.stringify(s)}`;
    if (s.op === "sweep") {
      expect(await store.sweep(now), at).toBe(model.sweep(now));
    } else if (s.op === "expire") {
      expect(await store.expire(s.fp, now), at).toBe(model.expire(s.fp, now));
    } else {
      const current = model.entries.get(s.fp);
      // The model hands out the token the store chose, so their entries can be compared whole.
      const token = "right" in s && s.right ? (current?.token ?? "none") : "wrong-token";
      let result: ReplayResult;
      let t: Transition;
      switch (s.op) {
        case "reserve":
          result = await store.reserve(s.fp, { ttlMs: s.ttl, now });
          t = decideReserve(s.fp, current, result.ok ? result.entry.token : "refused", s.ttl, now);
          break;
        case "consume": {
          const context = s.pending ? { step: i } : undefined;
          result = await store.consume(s.fp, { now, ...(context === undefined ? {} : { context }) });
          t = decideConsume(s.fp, current, result.ok ? result.entry.token : "refused", context, now);
          break;
        }
        case "startExecution":
          result = await store.startExecution(s.fp, token, now);
          t = decideStartExecution(current, token, now);
          break;
        case "confirm":
          result = await store.confirm(s.fp, token, now);
          t = decideConfirm(current, token, now);
          break;
        case "markPendingOverride":
          result = await store.markPendingOverride(s.fp, token, { step: i }, now);
          t = decideMarkPendingOverride(current, token, { step: i }, now);
          break;
        case "fail":
          result = await store.fail(s.fp, token, { ttlMs: s.ttl, now });
          t = decideFail(current, token, s.ttl, now);
          break;
        case "resolveOverride":
          result = await store.resolveOverride(s.fp, token, s.approved, { resolution: { step: i }, now });
          t = decideResolveOverride(current, token, s.approved, { step: i }, now);
          break;
      }
      expect(result, at).toEqual(model.apply(s.fp, t));
    }
    for (const f of FINGERPRINTS) expect(await store.read(f), `${at}, then ${f}`).toEqual(model.entries.get(f) ?? null);
    await check();
  }
}

describe("replay stores against the lifecycle's decisions", () => {
  it("MemoryReplayStore answers, sweeps and stores as the model does", async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (plan) => {
        const store = new MemoryReplayStore();
        await agree(store, plan);
        await store.close();
      }),
      { numRuns: 300 },
    );
  });

  it("LmdbReplayStore does too, with its expiry index holding exactly the entries that expire", async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-replay-model-"));
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(steps, async (plan) => {
          // A fresh environment per run; not synced to disk (the model is about answers, not about crashes).
          const root = open({ path: join(dir, String((run += 1))), noSync: true });
          const store = new LmdbReplayStore(root);
          try {
            await store.backfillExpiryIndex();
            await agree(store, plan, async () => expect(storedIndex(root).keys).toEqual(expectedIndex(root)));
          } finally {
            await store.close();
            await root.close();
          }
        }),
        { numRuns: 150 },
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
