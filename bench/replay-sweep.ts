/**
 * What one sweep of the LMDB replay store costs on a data dir that has made many decisions (`npx tsx
 * bench/replay-sweep.ts`). Not a test: it prints numbers. A fresh data dir gets BENCH_CONSUMED consumed entries (written
 * in bulk straight into the replay database, as `consume` stores them: they never expire, so they have no expiry key)
 * and BENCH_EXPIRED reservations through the store, which have all expired when the sweep runs. Printed: the sweep's
 * wall time, how many it removed, the longest the event loop was held meanwhile (perf_hooks monitorEventLoopDelay,
 * 1 ms resolution: the largest delay a timer saw), and how long each of its write transactions held the loop.
 *
 * Then, where the store has an expiry index to backfill (`backfillExpiryIndex`), the one-time backfill of a data dir
 * written before the index existed: the same entries written straight into the replay database, the store opened on
 * it, its time to index them all and the longest the event loop was held meanwhile.
 *
 * Environment: BENCH_CONSUMED (default 1,000,000), BENCH_EXPIRED (default 1,000).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { LmdbReplayStore } from "../runtime/src/replay/lmdb-store.js";
import { open, type Database, type RootDatabase } from "lmdb";

const CONSUMED = Number(process.env["BENCH_CONSUMED"] ?? 1_000_000);
const EXPIRED = Number(process.env["BENCH_EXPIRED"] ?? 1_000);
const T0 = 1_700_000_000_000;
const TTL_MS = 1_000;
const BULK = 50_000;

/** `n` consumed entries and `reservations` reservations of TTL_MS, written into the replay database without the store. */
async function writeRaw(root: RootDatabase, n: number, reservations: number): Promise<void> {
  const db = root.openDB<unknown, string>("replay", { encoding: "json" });
  for (let i = 0; i < n; i += BULK) {
    await root.transaction(() => {
      for (let j = i; j < Math.min(n, i + BULK); j++) {
        const fingerprint = `consumed-${j.toString().padStart(8, "0")}`;
        db.putSync(fingerprint, { fingerprint, state: "consumed", token: `t-${j}`, createdAt: T0, updatedAt: T0, expiresAt: null });
      }
    });
  }
  await root.transaction(() => {
    for (let j = 0; j < reservations; j++) {
      const fingerprint = `reserved-${j}`;
      db.putSync(fingerprint, { fingerprint, state: "reserved", token: `r-${j}`, createdAt: T0, updatedAt: T0, expiresAt: T0 + TTL_MS });
    }
  });
}

/**
 * Times every transaction callback of the databases the store opens on `root` from now on: each runs synchronously
 * on the event loop, so each is one uninterrupted stretch (a sweep's or backfill's slice, with whatever request
 * callbacks share its transaction). On a busy machine a stretch also counts the time the process was not scheduled.
 */
function timeCallbacks(root: RootDatabase): number[] {
  const stretches: number[] = [];
  const openDB = root.openDB.bind(root) as (name: string, options: object) => Database<unknown, string>;
  (root as { openDB: unknown }).openDB = (name: string, options: object) => {
    const db = openDB(name, options);
    const transaction = db.transaction.bind(db);
    db.transaction = <T>(callback: () => T) =>
      transaction(() => {
        const started = performance.now();
        try {
          return callback();
        } finally {
          stretches.push(performance.now() - started);
        }
      });
    return db;
  };
  return stretches;
}

function describeStretches(stretches: number[]): string {
  const sorted = [...stretches].sort((a, b) => a - b);
  const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(2);
  return `${sorted.length} write transactions, each on the loop for p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`;
}

/** `work`'s wall time in ms and the longest the event loop was held meanwhile. */
async function timed<T>(work: () => Promise<T>): Promise<{ readonly value: T; readonly ms: number; readonly maxLoopMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  // The monitor's timer must be running before the work starts (its first stretch may be synchronous) and see the end.
  await sleep(20);
  const started = performance.now();
  const value = await work();
  const ms = performance.now() - started;
  await sleep(20);
  delay.disable();
  return { value, ms, maxLoopMs: delay.max / 1e6 };
}

async function sweepBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "writ-bench-sweep-"));
  try {
    const root = open({ path: dir });
    const stretches = timeCallbacks(root);
    const store = new LmdbReplayStore(root);
    // An empty data dir: the backfill (where there is one) has nothing to do and is complete before the bulk write.
    await (store as Partial<{ backfillExpiryIndex(): Promise<number> }>).backfillExpiryIndex?.();
    await writeRaw(root, CONSUMED, 0);
    await Promise.all(Array.from({ length: EXPIRED }, (_, i) => store.reserve(`reserved-${i}`, { now: T0, ttlMs: TTL_MS })));
    for (const label of ["first sweep", "second sweep (nothing expired)"]) {
      stretches.length = 0;
      const { value, ms, maxLoopMs } = await timed(() => store.sweep(T0 + TTL_MS));
      console.log(
        `${label}: ${CONSUMED.toLocaleString("en")} consumed + ${EXPIRED.toLocaleString("en")} expired: removed ${value} in ${ms.toFixed(1)} ms, longest event-loop stall ${maxLoopMs.toFixed(1)} ms; ${describeStretches(stretches)}`,
      );
    }
    await store.close();
    await root.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function backfillBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "writ-bench-backfill-"));
  try {
    const root = open({ path: dir });
    await writeRaw(root, CONSUMED, EXPIRED);
    const stretches = timeCallbacks(root);
    const { value, ms, maxLoopMs } = await timed(async () => {
      const store = new LmdbReplayStore(root) as LmdbReplayStore & Partial<{ backfillExpiryIndex(): Promise<number> }>;
      if (store.backfillExpiryIndex === undefined) return null;
      const read = await store.backfillExpiryIndex();
      const removed = await store.sweep(T0 + TTL_MS);
      await store.close();
      return { read, removed };
    });
    if (value === null) console.log("backfill: this store has no expiry index");
    else
      console.log(
        `backfill of ${(CONSUMED + EXPIRED).toLocaleString("en")} entries written without the index: read ${value.read}, then swept ${value.removed}, in ${ms.toFixed(0)} ms, longest event-loop stall ${maxLoopMs.toFixed(1)} ms; ${describeStretches(stretches)}`,
      );
    await root.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await sweepBench();
await backfillBench();
