/**
 * A seeded store, ready to run on: the one kept under BENCH_SOAK_DIR when its seeding finished (its `soak-seed.json`),
 * else seeded now, from empty. The small store of a comparison is seeded afresh every time (a few seconds): a run adds
 * its load's decisions to the store it runs on, which would leave a kept small store no longer small.
 */
import { loadCases } from "../sidecar/policy-cases.js";
import { DecisionMaker } from "./decisions.js";
import { DAY_MS, seed } from "./seed.js";
import type { SoakSettings } from "./settings.js";
import { emptyStore, openStore, readManifest, signingKeyOf, storeSize, writeManifest, type SeedManifest, type Store, type StoreSize } from "./store.js";

export interface Prepared {
  readonly manifest: SeedManifest;
  /** Measured after seeding (null when a kept store was reused: its size then is printed by the run). */
  readonly seeded: { readonly perSecond: number; readonly size: StoreSize } | null;
}

export async function decisionMaker(store: Store): Promise<DecisionMaker> {
  const cases = await loadCases();
  return DecisionMaker.create(store.policies, store.bundleKey, await signingKeyOf(store), cases.valid.map((c) => c.signals));
}

export function mb(bytes: number): string {
  return `${(bytes / 1e6).toLocaleString("en-US", { maximumFractionDigits: 1 })} MB`;
}

export function printSize(size: StoreSize, decisions: number): void {
  const file = size.fileBytes === null ? "" : `; data.mdb ${mb(size.fileBytes)} on disk (${(size.fileBytes / decisions).toFixed(0)} bytes per decision, ${(size.fileBytes / size.bytes).toFixed(2)}× the live pages)`;
  console.log(`    size: ${mb(size.bytes)} live, ${(size.bytes / decisions).toFixed(0)} bytes per decision${file}`);
  for (const part of size.parts.slice(0, 8)) {
    console.log(`      ${part.name.padEnd(32)} ${mb(part.bytes).padStart(12)}  ${(part.bytes / decisions).toFixed(0).padStart(6)} B/decision${part.entries === null ? "" : `  ${part.entries.toLocaleString("en-US")} entries`}`);
  }
}

export async function prepare(settings: SoakSettings, store: Store, fresh: boolean): Promise<Prepared> {
  const kept = fresh || settings.reseed ? null : await readManifest(store);
  if (kept !== null && kept.decisions === store.decisions && kept.engine === store.engine) {
    console.log(`  ${store.engine} ${store.decisions.toLocaleString("en-US")}: kept store in ${store.dir}, seeded ${new Date(kept.seededAt).toISOString()} (BENCH_SOAK_RESEED=1 to seed again)`);
    return { manifest: kept, seeded: null };
  }
  await emptyStore(settings, store);
  const label = `${store.engine} ${store.decisions.toLocaleString("en-US")}`;
  console.log(`  ${label}: seeding into ${store.dir}${store.databaseName === null ? "" : ` and database ${store.databaseName}`}`);
  const maker = await decisionMaker(store);
  const spanMs = settings.spanDays * DAY_MS;
  const seededAt = Date.now();
  const backend = await openStore(store);
  let outcome;
  try {
    outcome = await seed(backend, maker, store.decisions, seededAt, spanMs, label);
  } finally {
    await backend.close();
  }
  const manifest: SeedManifest = { engine: store.engine, decisions: store.decisions, seededAt, spanMs, seconds: outcome.seconds };
  await writeManifest(store, manifest);
  const size = await storeSize(store);
  console.log(`  ${label}: seeded in ${outcome.seconds.toFixed(1)} s, ${outcome.perSecond.toFixed(0)} decisions/s (10 million would take ${((1e7 / outcome.perSecond) / 60).toFixed(0)} min at this rate)`);
  printSize(size, store.decisions);
  return { manifest, seeded: { perSecond: outcome.perSecond, size } };
}
