/**
 * The compressed decision records (storage/lmdb/decision-records.ts, SERVICE_AUDIT_COMPRESSION): records of a data dir
 * written before compression read as they are; the bytes put are the bytes read; a data dir reads with the dictionary it
 * stored, whatever the release ships, and keeps reading its compressed records once compression is off again; one whose
 * dictionary is gone, damaged or of an unknown format is refused with the reason.
 */
import { asBinary, open, type RootDatabase } from "lmdb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SHIPPED_DICTIONARY, type RecordDictionary } from "../../../src/storage/lmdb/decision-dictionary.js";
import { DECISION_RECORDS_DATABASE, RECORD_COMPRESSION_DATABASE, openDecisionRecords } from "../../../src/storage/lmdb/decision-records.js";
import { decision, tempEnv, type TempEnv } from "../../audit/support.js";

type Key = [number, string];
const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1_000).toISOString();
/** The i-th record's key and its exact JSON bytes, as the trail stores them. */
function record(i: number): { key: Key; bytes: Buffer } {
  const body = decision({ executionId: `e-${i}`, recordedAt: at(i) });
  return { key: [Date.parse(body.recordedAt), body.attestation.execution_fingerprint], bytes: Buffer.from(JSON.stringify(body)) };
}

const ON = { compress: true } as const;
/** The records as stored, uncompressed. */
const rawOf = (root: RootDatabase) => root.openDB<Buffer, Key>(DECISION_RECORDS_DATABASE, { encoding: "binary" });
const metaOf = (root: RootDatabase) => root.openDB<unknown, string>(RECORD_COMPRESSION_DATABASE, { encoding: "json" });

async function putAll(db: { put(key: Key, value: unknown): Promise<boolean> }, records: readonly { key: Key; bytes: Buffer }[]) {
  for (const { key, bytes } of records) await db.put(key, asBinary(bytes));
}

describe("compressed decision records", () => {
  let env: TempEnv;
  beforeEach(async () => {
    env = await tempEnv();
  });
  afterEach(() => env.dispose());

  it("stores a record compressed and answers its exact bytes from getBinary and its value from get", async () => {
    const records = Array.from({ length: 20 }, (_, i) => record(i));
    const db = openDecisionRecords<unknown, Key>(env.root, ON);
    await putAll(db, records);
    for (const { key, bytes } of records) {
      expect(Buffer.compare(db.getBinary(key)!, bytes)).toBe(0);
      expect(db.get(key)).toEqual(JSON.parse(bytes.toString("utf8")));
      const stored = rawOf(env.root).get(key)!;
      expect(stored[0]).toBe(254);
      expect(stored.length * 2).toBeLessThan(bytes.length);
    }
    expect(Array.from(db.getRange({}), ({ value }) => value)).toEqual(records.map(({ bytes }) => JSON.parse(bytes.toString("utf8"))));
  });

  it("reads the records of a data dir written before compression as they are, beside the ones written after", async () => {
    const before = Array.from({ length: 10 }, (_, i) => record(i));
    await putAll(env.root.openDB<unknown, Key>(DECISION_RECORDS_DATABASE, { encoding: "json" }), before);
    env = await env.reopen();
    const after = Array.from({ length: 10 }, (_, i) => record(100 + i));
    const db = openDecisionRecords<unknown, Key>(env.root, ON);
    await putAll(db, after);
    // Every read held until all are done: each answer is a copy of its own, not a buffer the next read overwrites.
    const read = [...before, ...after].map(({ key }) => db.getBinary(key)!);
    expect(read.map((bytes) => bytes.toString("utf8"))).toEqual([...before, ...after].map(({ bytes }) => bytes.toString("utf8")));
    expect(rawOf(env.root).get(before[0]!.key)![0]).toBe("{".charCodeAt(0));
    expect(rawOf(env.root).get(after[0]!.key)![0]).toBe(254);
  });

  it("reads with the dictionary the data dir stored at its first open, not the one a later release ships", async () => {
    const records = Array.from({ length: 10 }, (_, i) => record(i));
    await putAll(openDecisionRecords<unknown, Key>(env.root, ON), records);
    env = await env.reopen();
    const later: RecordDictionary = { id: "decision-records-2", bytes: Buffer.from(JSON.stringify(records[3]!.bytes.toString("utf8"))) };
    const db = openDecisionRecords<unknown, Key>(env.root, { compress: true, shipped: later });
    for (const { key, bytes } of records) expect(Buffer.compare(db.getBinary(key)!, bytes)).toBe(0);
    expect(metaOf(env.root).get("decision-records")).toMatchObject({ format: 1, id: SHIPPED_DICTIONARY.id });
    // What the stored dictionary prevents: the same records read with the later one are not their bytes (lmdb-js
    // prints the values it fails to decompress on stderr).
    const misread = env.root.openDB<Buffer, Key>(DECISION_RECORDS_DATABASE, {
      encoding: "binary",
      compression: { dictionary: later.bytes, threshold: 100 },
    });
    expect(records.some(({ key, bytes }) => !bytes.equals(misread.get(key) ?? Buffer.alloc(0)))).toBe(true);
  });

  it("refuses a data dir whose dictionary is missing while its records are compressed", async () => {
    await putAll(openDecisionRecords<unknown, Key>(env.root, ON), [record(1)]);
    await metaOf(env.root).remove("decision-records");
    for (const compress of [true, false]) {
      expect(() => openDecisionRecords(env.root, { compress })).toThrow(
        /decision records in this data dir are compressed, but its dictionary \(`decision-records` in `audit-record-compression`\) is missing/,
      );
    }
    // Nothing was stored by the refused open.
    expect(metaOf(env.root).get("decision-records")).toBeUndefined();
  });

  it("refuses a dictionary of a format it does not know, and a damaged one", async () => {
    openDecisionRecords(env.root, ON);
    await metaOf(env.root).put("decision-records", { format: 2, id: "future", dictionary: "" });
    for (const compress of [true, false]) {
      expect(() => openDecisionRecords(env.root, { compress })).toThrow(
        /compressed in format 2, not 1: run the writ release that wrote them, or a later one/,
      );
    }
    await metaOf(env.root).put("decision-records", { format: 1, id: "damaged" });
    expect(() => openDecisionRecords(env.root, ON)).toThrow(/dictionary of this data dir's decision records .* is damaged/);
  });

  it("opens a read-only environment with its stored dictionary, and one written before compression as it is", async () => {
    const compressed = Array.from({ length: 5 }, (_, i) => record(i));
    await putAll(openDecisionRecords<unknown, Key>(env.root, ON), compressed);
    const other: RecordDictionary = { id: "other", bytes: Buffer.from("{}") };
    const plain = await tempEnv();
    const before = Array.from({ length: 5 }, (_, i) => record(10 + i));
    await putAll(plain.root.openDB<unknown, Key>(DECISION_RECORDS_DATABASE, { encoding: "json" }), before);
    await Promise.all([env.close(), plain.close()]);
    for (const [dir, records] of [
      [env.dir, compressed],
      [plain.dir, before],
    ] as const) {
      const readOnly = open({ path: dir, maxDbs: 32, readOnly: true });
      try {
        const db = openDecisionRecords<unknown, Key>(readOnly, { compress: true, shipped: other });
        for (const { key, bytes } of records) expect(Buffer.compare(db.getBinary(key)!, bytes)).toBe(0);
        expect(Array.from(readOnly.getKeys({})).includes(RECORD_COMPRESSION_DATABASE)).toBe(dir === env.dir);
      } finally {
        await readOnly.close();
      }
    }
    await plain.dispose();
  });

  it("off (the default): writes plain JSON and stores no dictionary; turned off again, reads what it compressed and compresses nothing more", async () => {
    const plain = Array.from({ length: 5 }, (_, i) => record(i));
    await putAll(openDecisionRecords<unknown, Key>(env.root), plain);
    expect(rawOf(env.root).get(plain[0]!.key)![0]).toBe("{".charCodeAt(0));
    expect(metaOf(env.root).get("decision-records")).toBeUndefined();
    env = await env.reopen();
    const compressed = Array.from({ length: 5 }, (_, i) => record(10 + i));
    await putAll(openDecisionRecords<unknown, Key>(env.root, ON), compressed);
    env = await env.reopen();
    const afterwards = Array.from({ length: 5 }, (_, i) => record(20 + i));
    const db = openDecisionRecords<unknown, Key>(env.root, { compress: false });
    await putAll(db, afterwards);
    const all = [...plain, ...compressed, ...afterwards];
    expect(all.map(({ key }) => db.getBinary(key)!.toString("utf8"))).toEqual(all.map(({ bytes }) => bytes.toString("utf8")));
    expect(all.map(({ key }) => rawOf(env.root).get(key)![0])).toEqual([
      ...plain.map(() => "{".charCodeAt(0)),
      ...compressed.map(() => 254),
      ...afterwards.map(() => "{".charCodeAt(0)),
    ]);
  });
});
