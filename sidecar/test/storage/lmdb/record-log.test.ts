/**
 * The record log contract (record-log-contract.ts) on the LMDB trail, with a Tamperer that edits the trail's named
 * databases directly; and what only LMDB has: the record log turned on for a trail written without it.
 */
import type { ReplayStore } from "@writ/runtime";
import { LmdbReplayStore } from "@writ/runtime/lmdb";
import type { Database, Key } from "lmdb";
import { describe, expect, it } from "vitest";
import { AUDIT_DATABASES, LmdbAuditLog } from "../../../src/storage/lmdb/audit-log.js";
import { openDecisionRecords } from "../../../src/storage/lmdb/decision-records.js";
import { RECORD_LOG_DATABASES } from "../../../src/storage/lmdb/record-log-storage.js";
import { parseLocator } from "../../../src/audit/record-log/locator.js";
import type { AuditRetention } from "../../../src/audit/retention.js";
import {
  MANUAL_CHECKPOINTS,
  recordLogContract,
  writeTrail,
  type RecordLogHarness,
  type Tamperer,
  type Undo,
} from "../../audit/record-log-contract.js";
import { tempEnv, type TempEnv } from "../../audit/support.js";

interface HarnessOptions {
  readonly retention?: AuditRetention;
  readonly recordLog?: boolean;
  /** SERVICE_AUDIT_COMPRESSION. */
  readonly compressRecords?: boolean;
}

function harness(env: TempEnv, options: HarnessOptions = {}): RecordLogHarness {
  let replay: ReplayStore | null = null;
  const audit = new LmdbAuditLog(env.root, {
    checkpoints: MANUAL_CHECKPOINTS,
    compressRecords: options.compressRecords ?? false,
    recordLog: options.recordLog ?? true,
    decisionInstant: async (fp) => (await replay?.read(fp))?.createdAt,
    ...(options.retention ? { retention: options.retention } : {}),
  });
  replay = audit.recording(new LmdbReplayStore(env.root));
  const close = async () => {
    await audit.close();
    await replay.close();
  };
  return {
    audit,
    replay,
    tamper: lmdbTamperer(env),
    prune: (now) => audit.prune(now),
    reopen: async (next) => {
      await close();
      return harness(await env.reopen(), { compressRecords: options.compressRecords ?? false, ...next });
    },
    dispose: async () => {
      await close();
      await env.dispose();
    },
  };
}

/** Where the record at each position of the log is stored: its database and key, read from the log's entries. */
function lmdbTamperer(env: TempEnv): Tamperer {
  const db = (name: string) => env.root.openDB<unknown, Key>(name, { encoding: "json" });
  const databases = {
    decision: openDecisionRecords<unknown, [number, string]>(env.root) as Database<unknown, Key>,
    beside: db(AUDIT_DATABASES.decisions),
    verification: db(AUDIT_DATABASES.verifications),
    security: db(AUDIT_DATABASES.security),
    prune: db(RECORD_LOG_DATABASES.prunes),
  };
  const entries = env.root.openDB<Buffer, number>(RECORD_LOG_DATABASES.entries, { encoding: "binary" });
  const place = (position: number): { db: Database<unknown, Key>; key: Key; kind: string } => {
    const { kind, fields } = parseLocator(entries.get(position)!.subarray(32).toString("utf8"));
    if (kind === "decision") return { db: databases.decision, key: [Number(fields[0]), fields[1]!], kind };
    if (kind === "override" || kind === "confirmation") return { db: databases.beside, key: `${fields[0]}/${kind}`, kind };
    return { db: databases[kind], key: [Number(fields[0]), Number(fields[1])], kind };
  };
  const restore =
    (p: ReturnType<typeof place>, value: unknown): Undo =>
    async () =>
      void (await p.db.put(p.key, value));
  return {
    kinds: async () => Array.from(entries.getKeys({}), (position) => place(position).kind as never),
    edit: async (position, t) => {
      const p = place(position);
      const original = p.db.get(p.key);
      await p.db.put(p.key, { ...(original as object), tampered: t });
      return restore(p, original);
    },
    remove: async (position) => {
      const p = place(position);
      const original = p.db.get(p.key);
      await p.db.remove(p.key);
      return restore(p, original);
    },
    swap: async (a, b) => {
      const [first, second] = [place(a), place(b)];
      const [one, two] = [first.db.get(first.key), second.db.get(second.key)];
      await first.db.put(first.key, two);
      await second.db.put(second.key, one);
      return async () => {
        await first.db.put(first.key, one);
        await second.db.put(second.key, two);
      };
    },
    insert: async (position, t) => {
      const p = place(position);
      // A key no logged record has, of the same shape.
      const forged: Key = Array.isArray(p.key)
        ? [(p.key[0] as number) + 1, typeof p.key[1] === "number" ? 9_000 + t : `f${t}`]
        : `forged${t}/${p.kind}`;
      await p.db.put(forged, p.db.get(p.key));
      return async () => void (await p.db.remove(forged));
    },
  };
}

recordLogContract("LMDB", async (options) => harness(await tempEnv(), options));
recordLogContract("LMDB with compressed decision records", async (options) =>
  harness(await tempEnv(), { ...options, compressRecords: true }),
);

describe("the LMDB record log turned on for a trail written without it", () => {
  it("takes the trail's records into the log at its first open, so the export verifies", async () => {
    const env = await tempEnv();
    let h = harness(env, { recordLog: false });
    await writeTrail(h, 0, 12);
    expect(h.audit.recordLog).toBeNull();
    h = await h.reopen();
    try {
      const log = h.audit.recordLog!;
      const status = await log.status();
      expect(status).toMatchObject({ size: 0 });
      expect(status!.pending).toBeGreaterThan(12);
      const checkpoint = (await log.checkpointNow())!;
      expect(checkpoint.size).toBe(status!.pending);
      await writeTrail(h, 12, 3);
      expect((await log.checkpointNow())!.size).toBeGreaterThan(checkpoint.size);
    } finally {
      await h.dispose();
    }
  });
});
