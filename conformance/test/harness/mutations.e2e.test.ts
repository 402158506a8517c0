/**
 * The suite is not vacuous: run through a mutating proxy in front of a fresh built writ sidecar, it passes when the
 * proxy changes nothing, and fails, in the named cases, for each single broken behaviour of `MUTATIONS`.
 *
 * Sidecars are shared where the rate limit allows: a Surface A run spends about 13 of the 100 `POST /execute` a
 * minute, and the rate-limit case spends the rest, so the mutations run in groups of at most four per sidecar, the
 * rate-limit case only where the budget is meant to be spent.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runConformance } from "../../src/runner.js";
import type { ConformanceReport } from "../../src/report.js";
import { killAllBuiltSidecars } from "../../../sidecar/test/support/built-sidecar.js";
import { API_KEY, compileFixtures, startWrit, type Fixtures, type Writ } from "../support/writ.js";
import { startMutatingProxy, type Mutation } from "./mutating-proxy.js";
import { MUTATIONS, type MutationCase } from "./mutations.js";

let fixtures: Fixtures;
let publicKeyPem: string;
beforeAll(async () => {
  fixtures = await compileFixtures();
  publicKeyPem = await readFile(fixtures.publicKey, "utf8");
});
afterAll(async () => {
  await killAllBuiltSidecars();
  await fixtures?.remove();
});

const caught = new Map<string, string[]>();
afterAll(() => {
  for (const [name, ids] of caught) console.log(`mutation "${name}" caught by ${ids.length} cases: ${ids.join(", ")}`);
});

async function runThrough(writ: Writ, surface: "a" | "b", mutation: Mutation, filter: (id: string) => boolean): Promise<ConformanceReport> {
  const proxy = await startMutatingProxy(surface === "a" ? writ.surfaceA : writ.surfaceB, mutation);
  try {
    return await runConformance({ surface, baseUrl: proxy.url, apiKey: API_KEY, publicKeyPem, filter: (c) => filter(c.id) });
  } finally {
    await proxy.close();
  }
}

const failedIds = (report: ConformanceReport) => report.cases.filter((c) => c.outcome === "fail").map((c) => c.id);
const messagesOf = (report: ConformanceReport) => report.cases.flatMap((c) => c.failures.map((f) => `${c.id}: ${f.message}`));
const byName = (name: string): MutationCase => {
  const found = MUTATIONS.find((m) => m.mutation.name.startsWith(name));
  if (found === undefined) throw new Error(`no mutation named ${name}`);
  return found;
};

function itCatches(writ: () => Writ, name: string): void {
  const { mutation, surface, filter, mustFail } = byName(name);
  it(`catches ${mutation.name}`, async () => {
    const report = await runThrough(writ(), surface, mutation, filter);
    const failed = failedIds(report);
    expect(report.passed).toBe(false);
    expect(failed).toEqual(expect.arrayContaining([...mustFail]));
    // The proxy itself never broke a request: every failure is the mutation showing, not a network error.
    expect(messagesOf(report).filter((m) => /network error|proxy:/.test(m))).toEqual([]);
    caught.set(mutation.name, failed);
  });
}

describe("through a proxy that changes nothing, then the rate limit and Surface B mutations", () => {
  let writ: Writ;
  beforeAll(async () => {
    writ = await startWrit(fixtures);
  });
  afterAll(async () => {
    await writ?.stop();
  });

  it("every case of both surfaces passes, none skipped (the proxy is transparent)", async () => {
    for (const surface of ["a", "b"] as const) {
      const report = await runThrough(writ, surface, { name: "none" }, () => true);
      expect(messagesOf(report)).toEqual([]);
      expect(report.totals.skip).toBe(0);
      expect(report.passed).toBe(true);
    }
  });

  // The run above spent this sidecar's POST /execute budget: unmutated, the first answer would be the 429.
  itCatches(() => writ, "429 turned into 200");
  itCatches(() => writ, "a 14th Surface B route");
});

describe("signatures and statuses", () => {
  let writ: Writ;
  beforeAll(async () => {
    writ = await startWrit(fixtures);
  });
  afterAll(async () => {
    await writ?.stop();
  });

  itCatches(() => writ, "a wrong status");
  itCatches(() => writ, "an unsigned attestation");
  itCatches(() => writ, "a mis-signed attestation");
  itCatches(() => writ, "413 turned into 400");
});

describe("replay and authentication", () => {
  let writ: Writ;
  beforeAll(async () => {
    writ = await startWrit(fixtures);
  });
  afterAll(async () => {
    await writ?.stop();
  });

  itCatches(() => writ, "a replay accepted");
  itCatches(() => writ, "a missing auth check");
  itCatches(() => writ, "GET /health demanding the key");
});

it("every mutation is run above", () => {
  const run = [
    "429 turned into 200",
    "a 14th Surface B route",
    "a wrong status",
    "an unsigned attestation",
    "a mis-signed attestation",
    "413 turned into 400",
    "a replay accepted",
    "a missing auth check",
    "GET /health demanding the key",
  ];
  expect(MUTATIONS.map((m) => run.find((name) => m.mutation.name.startsWith(name)))).not.toContain(undefined);
});
