/**
 * Seeding a store with decisions, and arming it before each run, through the store's own write path: the sidecar's
 * backend (storage/lmdb/backend.ts or postgres/backend.ts, opened as the sidecar opens it), its replay store's `consume` with the
 * decision's record, exactly as the `Authorizer` calls it (decisions.ts). On LMDB each consume's record is written in
 * its write transaction and held for the record log; on PostgreSQL one statement per batch of claims inserts the
 * entries, the records and the log's pending rows. WINDOW consumes are issued at once, so lmdb-js commits them in one
 * transaction and the PostgreSQL store batches them into its claim statements. The record log is sequenced by the
 * backend's own checkpointer as it goes, and after every CHECKPOINT_EVERY decisions the seeder waits for everything
 * pending to be sequenced and a checkpoint signed (`checkpointNow`): a seeded log has a checkpoint every 2,000
 * entries, near a sidecar's under load (one per SERVICE_AUDIT_CHECKPOINT_RECORDS, 1,000), which the scheduled rounds
 * alone would not give it here (while writes arrive faster than a round sequences them, a round keeps sequencing and never reaches
 * its checkpoint), and nothing is left pending at the end.
 */
import type { StorageBackend } from "../../sidecar/src/storage/backend.js";
import type { DecisionMaker } from "./decisions.js";

const WINDOW = 2_000;
const CHECKPOINT_EVERY = 2_000;
const PROGRESS_EVERY_MS = 10_000;
export const DAY_MS = 86_400_000;

function writable(backend: StorageBackend) {
  const replay = backend.replay;
  const log = backend.audit.recordLog;
  if (replay === null || log === null) throw new Error("the store has no replay store or no record log: the soak needs both");
  return { replay, log };
}

/** Consumes `count` decisions, the i-th named `idOf(i)` and dated `at(i)`, WINDOW at a time; `onWindow` after each window. */
async function writeDecisions(
  backend: StorageBackend,
  maker: DecisionMaker,
  count: number,
  idOf: (i: number) => string,
  at: (i: number) => number,
  onWindow: (done: number) => Promise<void>,
): Promise<void> {
  const { replay } = writable(backend);
  for (let start = 0; start < count; start += WINDOW) {
    const end = Math.min(count, start + WINDOW);
    const writes = [];
    for (let i = start; i < end; i++) {
      const { fingerprint, options } = maker.make(i, idOf(i), at(i));
      writes.push(replay.consume(fingerprint, options));
    }
    const results = await Promise.all(writes);
    const refused = results.findIndex((r) => !r.ok);
    if (refused >= 0)
      throw new Error(`decision ${idOf(start + refused)} was refused (${JSON.stringify(results[refused])}): the store already holds it`);
    await onWindow(end);
  }
}

function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** Decisions between two vacuums of the pending queue, when the seeder does autovacuum's work (prepare.ts `vacuumer`). */
const VACUUM_EVERY = 100_000;

export interface SeedOutcome {
  readonly seconds: number;
  readonly perSecond: number;
}

/**
 * `count` decisions `soak-<i>`, dated evenly from `seededAt - spanMs` to `seededAt`, oldest first (as a sidecar writes
 * them); progress is printed every PROGRESS_EVERY_MS with the rate and the time left.
 */
export async function seed(
  backend: StorageBackend,
  maker: DecisionMaker,
  count: number,
  seededAt: number,
  spanMs: number,
  label: string,
  vacuum: (() => Promise<void>) | null,
): Promise<SeedOutcome> {
  const { log } = writable(backend);
  const started = performance.now();
  let last = { at: started, done: 0 };
  let checkpointed = 0;
  let vacuumed = 0;
  await writeDecisions(
    backend,
    maker,
    count,
    (i) => `soak-${i}`,
    (i) => seededAt - spanMs + Math.floor((i * spanMs) / count),
    async (done) => {
      if (done - checkpointed >= CHECKPOINT_EVERY || done === count) {
        await log.checkpointNow();
        checkpointed = done;
      }
      if (vacuum !== null && done - vacuumed >= VACUUM_EVERY) {
        await vacuum();
        vacuumed = done;
      }
      const now = performance.now();
      if (now - last.at >= PROGRESS_EVERY_MS) {
        const rate = ((done - last.done) * 1000) / (now - last.at);
        const overall = (done * 1000) / (now - started);
        console.log(
          `  ${label}: ${done.toLocaleString("en-US")} of ${count.toLocaleString("en-US")} (${((done / count) * 100).toFixed(1)}%), ${rate.toFixed(0)} decisions/s now, ${overall.toFixed(0)} overall, ${duration((count - done) / overall)} left`,
        );
        last = { at: now, done };
      }
    },
  );
  const status = await log.status();
  if (status === null || status.pending !== 0 || status.latest?.size !== status.size)
    throw new Error(`the record log is not fully checkpointed after seeding: ${JSON.stringify(status)}`);
  const seconds = (performance.now() - started) / 1000;
  return { seconds, perSecond: count / seconds };
}

/** What was written before a run, for the checks after it. */
export interface Armed {
  /** Decisions past their retention: the retention run removes them. */
  readonly dueIds: readonly string[];
  /** Replay entries (half reserved, half failed) that expire during the run, and when each expires (Unix ms). */
  readonly expiring: readonly { readonly fingerprint: string; readonly expiresAt: number }[];
  /** SERVICE_AUDIT_DECISIONS_RETENTION_DAYS for the run: every seeded decision is within it, the due ones beyond it. */
  readonly retentionDays: number;
}

/**
 * Before a run: `due` decisions dated just past the retention the run is given (and every seeded decision within it,
 * by at least an hour), and `expiring` replay entries whose TTLs end one after another over `[from, from + windowMs]`,
 * half of them reservations and half failed entries, so each sweep of the run has some to remove.
 */
export async function arm(
  backend: StorageBackend,
  maker: DecisionMaker,
  manifest: { readonly seededAt: number; readonly spanMs: number },
  due: number,
  expiring: number,
  from: number,
  windowMs: number,
  tag: string,
): Promise<Armed> {
  const { replay, log } = writable(backend);
  const now = Date.now();
  const retentionDays = Math.floor((now - manifest.seededAt + manifest.spanMs + 3_600_000) / DAY_MS) + 1;
  const cutoff = now - retentionDays * DAY_MS;
  const dueIds = Array.from({ length: due }, (_, i) => `soak-due-${tag}-${i}`);
  await writeDecisions(
    backend,
    maker,
    due,
    (i) => dueIds[i]!,
    (i) => cutoff - 3_600_000 - (due - i) * 1_000,
    async () => undefined,
  );
  const entries = Array.from({ length: expiring }, (_, i) => ({
    fingerprint: `soak-expiring-${tag}-${i}`,
    expiresAt: from + Math.floor(((i + 1) * windowMs) / expiring),
  }));
  for (let start = 0; start < entries.length; start += WINDOW) {
    await Promise.all(
      entries.slice(start, start + WINDOW).map(async ({ fingerprint, expiresAt }, j) => {
        const failing = (start + j) % 2 === 1;
        const reserved = await replay.reserve(fingerprint, { now, ttlMs: failing ? windowMs * 10 : expiresAt - now });
        if (!reserved.ok) throw new Error(`the reservation of ${fingerprint} was refused`);
        if (failing && !(await replay.fail(fingerprint, reserved.entry.token, { now, ttlMs: expiresAt - now })).ok)
          throw new Error(`${fingerprint} could not be failed`);
      }),
    );
  }
  await log.checkpointNow();
  return { dueIds, expiring: entries, retentionDays };
}

/** Reads in flight while checking what a run removed. */
const CHECK_WINDOW = 8;

/** After a run: how many of the due decisions are gone, and how many of the expiring entries. */
export async function armedLeft(
  backend: StorageBackend,
  armed: Armed,
): Promise<{ readonly dueLeft: number; readonly expiringLeft: number }> {
  const { replay } = writable(backend);
  let dueLeft = 0;
  let expiringLeft = 0;
  // A few reads at a time: on PostgreSQL each takes a connection of the pool, which times out a wait of seconds.
  for (let start = 0; start < Math.max(armed.dueIds.length, armed.expiring.length); start += CHECK_WINDOW) {
    const decisions = await Promise.all(armed.dueIds.slice(start, start + CHECK_WINDOW).map((id) => backend.audit.getDecision(id)));
    dueLeft += decisions.filter((d) => d !== null).length;
    const entries = await Promise.all(armed.expiring.slice(start, start + CHECK_WINDOW).map((e) => replay.read(e.fingerprint)));
    expiringLeft += entries.filter((e) => e !== null).length;
  }
  return { dueLeft, expiringLeft };
}
