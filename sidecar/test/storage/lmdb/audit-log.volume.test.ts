/**
 * The LMDB trail at volume (docs/audit.md, "Running for years"): what a query, an export, a prune or a start after a
 * crash reads is what it answers or changes, not the trail; no read transaction outlives its request, even one that
 * fails; long work lets the event loop serve others between slices. Reads are counted by wrapping the trail's
 * databases (as audit-log.bounds.test.ts does); LMDB's reader table shows leaked read transactions.
 */
import { stat } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { executionFingerprint, type ReplayStore } from "@writ/runtime";
import { LmdbReplayStore } from "@writ/runtime/lmdb";
import type { Database, RootDatabase } from "lmdb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DayCount } from "../../../src/storage/lmdb/day-count.js";
import { openDecisionRecords } from "../../../src/storage/lmdb/decision-records.js";
import { AUDIT_DATABASES, LmdbAuditLog, type LmdbAuditLogOptions } from "../../../src/storage/lmdb/audit-log.js";
import { RECORD_LOG_DATABASES } from "../../../src/storage/lmdb/record-log-storage.js";
import { DAY_MS } from "../../../src/audit/retention.js";
import { MANUAL_CHECKPOINTS } from "../../audit/record-log-contract.js";
import { at, decision, tempEnv, type TempEnv } from "../../audit/support.js";

/** Entries and keys read from each named database through range reads and single gets. */
type Reads = Record<string, number>;

/** `root` with every database it opens wrapped, counting what is read from each. */
function counted(root: RootDatabase, reads: Reads): RootDatabase {
  const openDB = root.openDB.bind(root);
  return Object.assign(Object.create(root) as RootDatabase, {
    openDB: (name: string, options: object) => {
      const db = openDB(name, options) as Database<unknown, never>;
      const count = (n: number) => (reads[name] = (reads[name] ?? 0) + n);
      const getRange = db.getRange.bind(db);
      const getKeys = db.getKeys.bind(db);
      const getBinary = db.getBinary.bind(db);
      return Object.assign(Object.create(db) as typeof db, {
        getRange: (o: object) => getRange(o).map((entry) => (count(1), entry)),
        getKeys: (o: object) => getKeys(o).map((key) => (count(1), key)),
        getBinary: (key: never) => (count(1), getBinary(key)),
      });
    },
  });
}

/** Readers holding a read transaction (lmdb-js `readerList`: a header, then a line per reader, `-` when idle). */
function readers(root: RootDatabase): number {
  return root
    .readerList()
    .split("\n")
    .slice(1)
    .filter((line) => line.trim() !== "" && !/\s-\s*$/.test(line)).length;
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 5));

/**
 * The read transactions open once the transient ones are closed: the fewest seen over 200 ms. A leaked reader stays
 * open for good; one of a background round (sequencing, a checkpoint) that a loaded machine happens to catch at the
 * sample does not.
 */
async function steadyReaders(root: RootDatabase): Promise<number> {
  let fewest = readers(root);
  for (let i = 0; i < 40; i++) {
    await turn();
    fewest = Math.min(fewest, readers(root));
  }
  return fewest;
}

describe("the LMDB trail at volume", () => {
  let env: TempEnv;
  const closing: (() => Promise<unknown>)[] = [];

  beforeEach(async () => {
    env = await tempEnv();
  });
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
    await env.dispose();
  });

  /** A trail with its replay store, as the sidecar opens them, on `root` (the environment, or a counting wrapper of it). */
  function open(root: RootDatabase = env.root, options: LmdbAuditLogOptions = {}): { audit: LmdbAuditLog; replay: ReplayStore } {
    let replay: ReplayStore | null = null;
    const audit = new LmdbAuditLog(root, {
      checkpoints: MANUAL_CHECKPOINTS,
      decisionInstant: async (fp) => (await replay?.read(fp))?.createdAt,
      ...options,
    });
    replay = audit.recording(new LmdbReplayStore(env.root));
    const store = replay;
    closing.push(
      () => audit.close(),
      () => store.close(),
    );
    return { audit, replay };
  }

  async function decide(replay: ReplayStore, from: number, count: number, spec: { policyId?: string } = {}): Promise<void> {
    await Promise.all(
      Array.from({ length: count }, (_, j) => {
        const body = decision({
          executionId: `d-${from + j}`,
          recordedAt: at(from + j),
          status: (from + j) % 3 === 0 ? "rejected" : "approved",
          ...spec,
        });
        return replay.consume(executionFingerprint(body.executionId), {
          now: Date.parse(body.recordedAt),
          record: { kind: "decision", body },
        });
      }),
    );
  }

  describe("queries no store can answer", () => {
    it("an over-long policyId matches nothing, reads nothing and leaks no read transaction, 1,000 times over, and the data file does not grow", async () => {
      const reads: Reads = {};
      const { audit, replay } = open(counted(env.root, reads));
      await decide(replay, 0, 200);
      // Sequenced now, not by a background round during the queries: what grows the file is then only a leak.
      await audit.recordLog!.checkpointNow();
      // Each write replaces a value, freeing the pages it copied: LMDB reuses them, unless a leaked reader still sees them.
      const churn = env.root.openDB<string, string>("churn", { encoding: "json" });
      const value = "v".repeat(2_000);
      for (let i = 0; i < 200; i++) await churn.put("key", `${i}${value}`);
      const before = { readers: await steadyReaders(env.root), size: (await stat(join(env.dir, "data.mdb"))).size };
      for (const key of Object.keys(reads)) delete reads[key];
      for (let i = 0; i < 1_000; i++) {
        expect(await audit.listDecisions({ limit: 50, offset: 0, policyId: `p${"x".repeat(2_000 + i)}` })).toEqual([]);
        await churn.put("key", `${i}${value}`);
      }
      expect(reads[AUDIT_DATABASES.decisionFilters] ?? 0).toBe(0);
      expect(await steadyReaders(env.root)).toBe(before.readers);
      // A reader leaked by each query keeps each write's copied pages: a page or more per write, 4 MB or more. Without
      // one, the file keeps its size, but for a few pages whose reuse waited on a flush.
      expect((await stat(join(env.dir, "data.mdb"))).size - before.size).toBeLessThan(128 * 1024);
    });

    it("a walk that fails midway (an index entry without its record) answers an error and leaks no read transaction", async () => {
      const { audit, replay } = open();
      await decide(replay, 0, 100);
      await audit.flushed();
      // Damage: the newest decision's record is gone, its filter index entry stays.
      const records = openDecisionRecords<unknown, [number, string]>(env.root);
      const [newest] = Array.from(records.getKeys({ reverse: true, limit: 1 }));
      await records.remove(newest!);
      const before = await steadyReaders(env.root);
      // d-99, the newest, is rejected (every third is); a walk of the time index (the records' keys) no longer finds it.
      for (const query of [{ decision: "rejected" as const }, { policyId: "payments" }]) {
        await expect(audit.listDecisions({ limit: 10, offset: 0, ...query })).rejects.toThrow(/without a decision record/);
      }
      expect((await audit.listDecisions({ limit: 1, offset: 0 })).map((row) => row.executionId)).toEqual(["d-98"]);
      expect(await steadyReaders(env.root)).toBe(before);
    });
  });

  describe("the record log's accounting", () => {
    it("an export of an untouched log reads no stored record to look for records outside it; one stored around the log is listed", async () => {
      const reads: Reads = {};
      const { audit, replay } = open(counted(env.root, reads));
      await decide(replay, 0, 300);
      audit.recordVerification({ executionId: "v", valid: true, checks: {}, errors: [], recordedAt: at(400) });
      const log = audit.recordLog!;
      const checkpoint = (await log.checkpointNow())!;
      for (const key of Object.keys(reads)) delete reads[key];
      // A tail export: from the checkpoint, nothing but its start and the latest checkpoint.
      const tail = [];
      for await (const line of log.export(log.logId, checkpoint.size)) tail.push(line);
      expect(tail.map((line) => line.type)).toEqual(["start"]);
      expect(reads[AUDIT_DATABASES.decisionRecords] ?? 0).toBe(0);
      expect(reads[AUDIT_DATABASES.decisions] ?? 0).toBe(0);

      // Stored around the log: a copy of a decision under a key no logged record has.
      const records = openDecisionRecords<unknown, [number, string]>(env.root);
      const [first] = Array.from(records.getRange({ limit: 1 }));
      await records.put([first!.key[0], "f".repeat(64)], first!.value);
      const unlogged = [];
      for await (const line of log.export(log.logId, checkpoint.size)) if (line.type === "unlogged") unlogged.push(line);
      expect(unlogged).toHaveLength(1);
      expect(unlogged[0]).toMatchObject({ kind: "decision" });
    });

    it("stays balanced through retention and a restart, and counts the pruned positions of a log written before it kept them", async () => {
      const retention = {
        decisions: { maxAgeMs: DAY_MS, maxRecords: null },
        verifications: { maxAgeMs: null, maxRecords: null },
        security: { maxAgeMs: null, maxRecords: null },
      };
      const { audit, replay } = open(env.root, { retention });
      await decide(replay, 0, 400);
      await audit.recordLog!.checkpointNow();
      // Decisions are keyed at(ms) from 2025-03-10: a day and 200 ms later, the first 200 are past their retention.
      expect(await audit.prune(new Date(Date.parse(at(200)) + DAY_MS))).toBe(200);
      await audit.recordLog!.checkpointNow();
      await audit.close();
      // As a log of the release before left it: no `pruned` in its meta.
      const meta = env.root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" });
      expect(meta.get("pruned")).toBe(200);
      await meta.remove("pruned");

      const reads: Reads = {};
      const reopened = open(counted(env.root, reads), { retention });
      const log = reopened.audit.recordLog!;
      expect(meta.get("pruned")).toBe(200);
      for (const key of Object.keys(reads)) delete reads[key];
      const lines = [];
      for await (const line of log.export(log.logId)) lines.push(line);
      expect(lines.filter((line) => line.type === "unlogged")).toEqual([]);
      // The whole export reads each logged record once; no walk of the trail looks for records outside the log.
      expect(reads[AUDIT_DATABASES.decisionRecords]).toBe(400);
    });
  });

  describe("the start after a crash", () => {
    it("takes in what the crashed process held in memory, reading about as many records as it lacked", async () => {
      const { audit, replay } = open();
      await decide(replay, 0, 2_000);
      await audit.recordLog!.checkpointNow();
      await audit.close();
      // What a crash leaves: decisions committed with their replay transition, held in memory and lost with the process
      // (in the trail, in no log and not pending), and the process's open mark (one of a process that no longer runs).
      const records = openDecisionRecords<unknown, [number, string]>(env.root);
      await env.root.transaction(() => {
        for (let i = 2_000; i < 2_005; i++) {
          const body = decision({ executionId: `d-${i}`, recordedAt: at(i) });
          records.putSync([Date.parse(body.recordedAt), body.attestation.execution_fingerprint], body);
        }
      });
      const meta = env.root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" });
      await meta.put("open:crashed", { pid: 2 ** 22 + 1, host: hostname(), started: null });

      const reads: Reads = {};
      const notices: string[] = [];
      const next = open(counted(env.root, reads), { onNotice: (message) => notices.push(message) });
      expect(await next.audit.recordLog!.status()).toMatchObject({ size: 2_000, pending: 5 });
      expect(notices).toEqual([expect.stringMatching(/^audit: 5 records the record log lacked/)]);
      // The newest decisions first: the 5 it lacked, and no walk of the 2,000 others.
      expect(reads[AUDIT_DATABASES.decisionRecords] ?? 0).toBeLessThan(100);
      expect(meta.get("open:crashed")).toBeUndefined();
      expect((await next.audit.recordLog!.checkpointNow())?.size).toBe(2_005);
    });
  });

  describe("long work serves the event loop", () => {
    it("a timer runs during the export of a long log, long before the export ends", async () => {
      const { audit, replay } = open();
      for (let i = 0; i < 20_000; i += 2_000) await decide(replay, i, 2_000);
      const log = audit.recordLog!;
      await log.checkpointNow();
      let firedAt = -1;
      let lines = 0;
      setTimeout(() => (firedAt = lines), 1);
      for await (const _ of log.export(log.logId)) lines += 1;
      expect(lines).toBe(20_002);
      expect(firedAt).toBeGreaterThanOrEqual(0);
      expect(firedAt).toBeLessThan(lines / 2);
    });

    it("an export under way does not keep LMDB from reusing the pages that writes free meanwhile: the file does not grow", async () => {
      const { audit, replay } = open();
      for (let i = 0; i < 4_000; i += 2_000) await decide(replay, i, 2_000);
      const log = audit.recordLog!;
      await log.checkpointNow();
      const churn = env.root.openDB<string, string>("churn", { encoding: "json" });
      const value = "v".repeat(3_000);
      for (let i = 0; i < 100; i++) await churn.put("key", `${i}${value}`);
      await turn();
      const size = async () => (await stat(join(env.dir, "data.mdb"))).size;
      const before = await size();
      const lines = log.export(log.logId)[Symbol.asyncIterator]();
      for (let i = 0; i < 300; i++) await lines.next();
      // The export is a tenth of the way through; writes replace a value 300 times, each freeing the pages it copies.
      for (let i = 0; i < 300; i++) await churn.put("key", `${i}${value}`);
      await turn();
      expect(await size()).toBe(before);
      for (let line = await lines.next(); !line.done; line = await lines.next());
    });

    it("a timer runs during a prune of many records, which reads no pending entry it does not remove", async () => {
      const reads: Reads = {};
      const retention = {
        decisions: { maxAgeMs: DAY_MS, maxRecords: null },
        verifications: { maxAgeMs: null, maxRecords: null },
        security: { maxAgeMs: null, maxRecords: null },
      };
      const { audit, replay } = open(counted(env.root, reads), { retention });
      for (let i = 0; i < 6_000; i += 2_000) await decide(replay, i, 2_000);
      await audit.recordLog!.checkpointNow();
      for (let i = 0; i < 500; i++)
        audit.recordVerification({ executionId: `v${i}`, valid: true, checks: {}, errors: [], recordedAt: at(i) });
      await audit.flushed();
      for (const key of Object.keys(reads)) delete reads[key];
      let fired = false;
      setTimeout(() => (fired = true), 1);
      expect(await audit.prune(new Date(Date.parse(at(6_000)) + DAY_MS))).toBe(6_000);
      expect(fired).toBe(true);
      // The background sequencer reads the pending entries it appends (about 550: the verifications and the prune notes);
      // a prune that looked through them for what it removed would read them again at each of its 47 transactions.
      expect(reads[RECORD_LOG_DATABASES.pending] ?? 0).toBeLessThan(1_000);
    });
  });
});

describe("decisions_today (storage/lmdb/day-count.ts)", () => {
  let env: TempEnv;
  beforeEach(async () => {
    env = await tempEnv();
  });
  afterEach(() => env.dispose());

  it("counts the day once, then only what came after; uncounts what retention removes, whichever process; starts over the next day", async () => {
    const reads: Reads = {};
    const times = counted(env.root, reads).openDB<number, [number, string]>("times", { encoding: "json" });
    const day = Date.UTC(2026, 5, 1);
    const put = (ms: number, fp: string) => env.root.openDB<number, [number, string]>("times", { encoding: "json" }).put([ms, fp], 0);
    // One a minute until noon (decisions are keyed by the time they were made: none after now).
    for (let i = 0; i < 720; i++) await put(day + i * 60_000, `a${i}`);
    await put(day - 1, "yesterday");
    const count = new DayCount(times);
    const noon = day + DAY_MS / 2;
    expect(await count.count(noon)).toBe(720);
    reads["times"] = 0;
    await put(noon + 1, "late");
    expect(await count.count(noon + 60_000)).toBe(721);
    // Read: the keys from SETTLE_MS before the previous count on, not the morning again.
    expect(reads["times"]).toBeLessThan(5);
    // Retention removes the oldest first: yesterday's decision is not counted, and the day is not read again for it.
    const times2 = env.root.openDB<number, [number, string]>("times", { encoding: "json" });
    await times2.remove([day - 1, "yesterday"]);
    reads["times"] = 0;
    expect(await count.count(noon + 60_000)).toBe(721);
    expect(reads["times"]).toBeLessThan(5);
    // Then the day's first: counted no more, as when another process of the data dir removed it (nothing tells this one).
    await times2.remove([day, "a0"]);
    expect(await count.count(noon + 60_000)).toBe(720);
    await put(day + DAY_MS, "tomorrow");
    expect(await count.count(day + DAY_MS + 1)).toBe(1);
  });
});
