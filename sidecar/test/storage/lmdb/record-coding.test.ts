/**
 * Coded decision records (audit/record-coding.ts, storage/lmdb/record-templates.ts): coding is lossless for any text against
 * any template, a record of the trail's shape takes a fraction of its JSON, and a data dir's records read back as their
 * exact JSON bytes through every reader (listings, the record log's bytes, a reopen, another opener of the environment).
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decodeRecord, encodeRecord, isCoded, templateOf, type RecordTemplate } from "../../../src/audit/record-coding.js";
import { RecordTemplates } from "../../../src/storage/lmdb/record-templates.js";
import { DECISION_RECORDS_DATABASE, openDecisionRecords } from "../../../src/storage/lmdb/decision-records.js";
import { LmdbAuditLog } from "../../../src/storage/lmdb/audit-log.js";
import { decision, tempEnv, type TempEnv } from "../../audit/support.js";

/** JSON-like texts: runs of quoted strings, numbers and punctuation, some of them shared between texts. */
const pieces = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.constantFrom('"', '":"', '","', "{", "}", ":", ","),
  fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString("hex")),
  fc.uuid(),
  fc.date({ min: new Date(0), max: new Date(2 ** 44), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.uint8Array({ minLength: 1, maxLength: 70 }).map((b) => Buffer.from(b).toString("base64")),
);
const text = fc.array(pieces, { maxLength: 40 }).map((p) => p.join(""));

const utf8 = (s: string) => Buffer.from(s, "utf8");

describe("record coding", () => {
  it("is lossless: any text coded against any template reads back as the same bytes", () => {
    fc.assert(
      fc.property(text, text, text, (first, second, record) => {
        const template: RecordTemplate = templateOf(first, second) ?? { anchors: [] };
        const coded = encodeRecord(record, 7, template);
        if (coded === null) return;
        // No U+0000 of its own (PostgreSQL's text cannot hold one): only what the text itself held.
        if (!record.includes("\0")) expect(coded.includes("\0")).toBe(false);
        // Stored as UTF-8 and read back as UTF-8, as the records database does.
        const decoded = decodeRecord(utf8(coded).toString("utf8"), () => template);
        expect(utf8(decoded).equals(utf8(record))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it("keeps a record of the trail's shape in about a quarter of its JSON", () => {
    const records = Array.from({ length: 3 }, (_, i) =>
      JSON.stringify(decision({ executionId: crypto.randomUUID(), recordedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() })),
    );
    const template = templateOf(records[0]!, records[1]!)!;
    const coded = encodeRecord(records[2]!, 0, template)!;
    expect(decodeRecord(coded, () => template)).toBe(records[2]);
    expect(utf8(coded).length).toBeLessThan(utf8(records[2]!).length / 3);
  });

  it("refuses bytes that are not a coded record of the template they name", () => {
    const template = templateOf('{"a":"x","b":"long enough"}', '{"a":"y","b":"long enough"}')!;
    const coded = encodeRecord('{"a":"z","b":"long enough"}', 0, template)!;
    expect(() => decodeRecord(coded.slice(0, -1), () => template)).toThrow(/ends early|runs past|unknown/);
    expect(() => decodeRecord("{}", () => template)).toThrow(/not a coded/);
  });
});

describe("coded records in a data dir", () => {
  let env: TempEnv;
  beforeEach(async () => {
    env = await tempEnv();
  });
  afterEach(() => env.dispose());

  const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1_000).toISOString();
  const body = (i: number) => decision({ executionId: `e-${i}`, recordedAt: at(i), status: i % 2 === 0 ? "approved" : "rejected" });

  it("codes a shape's records from its third on, and every reader reads the exact JSON", async () => {
    const log = new LmdbAuditLog(env.root);
    for (let i = 0; i < 4; i++) log.recordDecision(body(i));
    await log.flushed();
    // The template of each shape is written after its second record, in a transaction of its own.
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (let i = 4; i < 40; i++) log.recordDecision(body(i));
    await log.flushed();
    const raw = env.root.openDB<Buffer, [number, string]>(DECISION_RECORDS_DATABASE, { encoding: "binary" });
    const stored = Array.from(raw.getRange({}), ({ value }) => value);
    expect(stored.filter((bytes) => isCoded(bytes)).length).toBeGreaterThanOrEqual(36);
    expect(stored.filter((bytes) => !isCoded(bytes)).length).toBeGreaterThanOrEqual(4);

    const records = openDecisionRecords<unknown, [number, string]>(env.root);
    for (let i = 0; i < 40; i++) {
      const b = body(i);
      const key: [number, string] = [Date.parse(b.recordedAt), b.attestation.execution_fingerprint];
      expect(records.get(key)).toEqual(b);
      expect(RecordTemplates.of(env.root).jsonBytes(records.getBinary(key)!).toString("utf8")).toBe(JSON.stringify(b));
    }
    const rows = await log.listDecisions({ limit: 100, offset: 0 });
    expect(rows.map((r) => r.executionId)).toEqual(Array.from({ length: 40 }, (_, i) => `e-${39 - i}`));
    await log.close();

    // Reopened: the templates are read back from the data dir.
    env = await env.reopen();
    const again = openDecisionRecords<unknown, [number, string]>(env.root);
    expect(Array.from(again.getRange({}), ({ value }) => value)).toEqual(Array.from({ length: 40 }, (_, i) => body(i)));
  });

  it("stores JSON with coding off", async () => {
    const log = new LmdbAuditLog(env.root, { codeRecords: false });
    for (let i = 0; i < 10; i++) {
      log.recordDecision(body(i));
      await log.flushed();
    }
    const raw = env.root.openDB<Buffer, [number, string]>(DECISION_RECORDS_DATABASE, { encoding: "binary" });
    expect(Array.from(raw.getRange({}), ({ value }) => value[0])).toEqual(Array.from({ length: 10 }, () => "{".charCodeAt(0)));
    await log.close();
  });
});
