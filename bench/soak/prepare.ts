/**
 * A seeded store, ready to run on: the one kept under BENCH_SOAK_DIR when its seeding finished (its `soak-seed.json`),
 * else seeded now, from empty. The small store of a comparison is seeded afresh every time (a few seconds): a run adds
 * its load's decisions to the store it runs on, which would leave a kept small store no longer small.
 */
import { existsSync } from "node:fs";
import { statfs } from "node:fs/promises";
import pg from "pg";
import { loadCases } from "../sidecar/policy-cases.js";
import { DecisionMaker } from "./decisions.js";
import { DAY_MS, seed } from "./seed.js";
import type { SoakSettings } from "./settings.js";
import {
  emptyStore,
  openStore,
  readManifest,
  signingKeyOf,
  storeSize,
  writeManifest,
  type SeedManifest,
  type Store,
  type StoreSize,
} from "./store.js";

export interface Prepared {
  readonly manifest: SeedManifest;
  /** Measured after seeding (null when a kept store was reused: its size then is printed by the run). */
  readonly seeded: { readonly perSecond: number; readonly size: StoreSize } | null;
}

export async function decisionMaker(store: Store): Promise<DecisionMaker> {
  const cases = await loadCases();
  return DecisionMaker.create(
    store.policies,
    store.bundleKey,
    await signingKeyOf(store),
    cases.valid.map((c) => c.signals),
  );
}

export function mb(bytes: number): string {
  return `${(bytes / 1e6).toLocaleString("en-US", { maximumFractionDigits: 1 })} MB`;
}

export function printSize(size: StoreSize, decisions: number): void {
  const file =
    size.fileBytes === null
      ? ""
      : `; data.mdb ${mb(size.fileBytes)} on disk (${(size.fileBytes / decisions).toFixed(0)} bytes per decision, ${(size.fileBytes / size.bytes).toFixed(2)}× the live pages)`;
  console.log(`    size: ${mb(size.bytes)} live, ${(size.bytes / decisions).toFixed(0)} bytes per decision${file}`);
  for (const part of size.parts.slice(0, 8)) {
    console.log(
      `      ${part.name.padEnd(32)} ${mb(part.bytes).padStart(12)}  ${(part.bytes / decisions).toFixed(0).padStart(6)} B/decision${part.entries === null ? "" : `  ${part.entries.toLocaleString("en-US")} entries`}`,
    );
  }
}

/**
 * Disk a decision takes, with a fifth or so to spare (bytes per decision measured by this benchmark at 100,000,
 * docs/running-for-years.md "Bytes per decision": data.mdb 1,396 on LMDB with coded records; 3,565 on PostgreSQL,
 * before its WAL).
 */
const DISK_PER_DECISION = { lmdb: 1_700, postgres: 4_500 } as const;

/** Where the store's bytes go: the data dir, or PostgreSQL's data directory when it is on this machine (null: unknown). */
async function storeFilesystem(settings: SoakSettings, store: Store): Promise<string | null> {
  if (store.databaseName === null) return settings.root;
  const client = new pg.Client({ connectionString: settings.postgresUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ dir: string }>("SELECT current_setting('data_directory') AS dir");
    return rows[0] !== undefined && existsSync(rows[0].dir) ? rows[0].dir : null;
  } catch {
    return null;
  } finally {
    await client.end();
  }
}

/** Refuses to seed a store the disk cannot hold: filling the disk midway would stop more than this benchmark. */
async function checkRoom(settings: SoakSettings, store: Store): Promise<void> {
  const where = await storeFilesystem(settings, store);
  if (where === null) return;
  const { bavail, bsize } = await statfs(where);
  const needed = store.decisions * DISK_PER_DECISION[store.engine];
  if (bavail * bsize < needed) {
    throw new Error(
      `seeding ${store.decisions.toLocaleString("en-US")} decisions on ${store.engine} needs about ${mb(needed)} free where ${where} is, and only ${mb(bavail * bsize)} is: ` +
        "remove a kept store under BENCH_SOAK_DIR (e.g. the other engine's), or run with BENCH_SOAK_KEEP=0 (each engine's store removed after its run)",
    );
  }
}

/**
 * On a PostgreSQL server with autovacuum off (as the machines' CI configuration has it), what autovacuum would do for the
 * seeded database: the record log's pending queue vacuumed as the seeding goes (docs/running-for-years.md, "Retention"),
 * else each sequencing round walks every dead row of the queue and seeding slows sevenfold by 3 million decisions; and,
 * before each run (`settle`), the queue vacuumed and every table analyzed, as autovacuum's analyze would have done after
 * so many inserts: a planner without statistics misjudges the sidecar's statements on 10 million rows (a probe of a
 * unique index estimated at 200 rows). Null on LMDB, and when autovacuum is on.
 */
async function vacuumer(
  store: Store,
  label: string,
): Promise<{ run: () => Promise<void>; settle: () => Promise<void>; end: () => Promise<void> } | null> {
  if (store.databaseUrl === null) return null;
  const client = new pg.Client({ connectionString: store.databaseUrl });
  await client.connect();
  const { rows } = await client.query<{ autovacuum: string }>("SELECT current_setting('autovacuum') AS autovacuum");
  if (rows[0]?.autovacuum !== "off") {
    await client.end();
    return null;
  }
  return {
    run: async () => void (await client.query("VACUUM writ_audit_log_pending")),
    settle: async () => {
      const started = Date.now();
      await client.query("VACUUM writ_audit_log_pending");
      await client.query("ANALYZE");
      console.log(
        `  ${label}: the server's autovacuum is off: vacuumed the pending queue and analyzed the database in ${((Date.now() - started) / 1000).toFixed(1)} s, as autovacuum would`,
      );
    },
    end: () => client.end(),
  };
}

export async function prepare(settings: SoakSettings, store: Store, fresh: boolean): Promise<Prepared> {
  const kept = fresh || settings.reseed ? null : await readManifest(store);
  if (kept !== null && kept.decisions === store.decisions && kept.engine === store.engine) {
    const label = `${store.engine} ${store.decisions.toLocaleString("en-US")}`;
    console.log(
      `  ${label}: kept store in ${store.dir}, seeded ${new Date(kept.seededAt).toISOString()} (BENCH_SOAK_RESEED=1 to seed again)`,
    );
    const vacuum = await vacuumer(store, label);
    try {
      await vacuum?.settle();
    } finally {
      await vacuum?.end();
    }
    return { manifest: kept, seeded: null };
  }
  await emptyStore(settings, store);
  await checkRoom(settings, store);
  const label = `${store.engine} ${store.decisions.toLocaleString("en-US")}`;
  console.log(`  ${label}: seeding into ${store.dir}${store.databaseName === null ? "" : ` and database ${store.databaseName}`}`);
  const maker = await decisionMaker(store);
  const spanMs = settings.spanDays * DAY_MS;
  const seededAt = Date.now();
  const backend = await openStore(store);
  const vacuum = await vacuumer(store, label);
  if (vacuum !== null) console.log(`  ${label}: the server's autovacuum is off: the seeder vacuums writ_audit_log_pending as it goes`);
  let outcome;
  try {
    outcome = await seed(backend, maker, store.decisions, seededAt, spanMs, label, vacuum?.run ?? null);
    await vacuum?.settle();
  } finally {
    await backend.close();
    await vacuum?.end();
  }
  const manifest: SeedManifest = { engine: store.engine, decisions: store.decisions, seededAt, spanMs, seconds: outcome.seconds };
  await writeManifest(store, manifest);
  const size = await storeSize(store);
  console.log(
    `  ${label}: seeded in ${outcome.seconds.toFixed(1)} s, ${outcome.perSecond.toFixed(0)} decisions/s (10 million would take ${(1e7 / outcome.perSecond / 60).toFixed(0)} min at this rate)`,
  );
  printSize(size, store.decisions);
  return { manifest, seeded: { perSecond: outcome.perSecond, size } };
}
