/**
 * `npm run bench:record-pages`: the bytes and pages a decision record takes in LMDB, and the CPU of writing and
 * reading it, for five encodings of the value (docs/benchmarks.md, "Record pages"): JSON (as the sidecar stored it
 * before), lmdb-js's LZ4 compression, LZ4 with the dictionary the sidecar ships and compresses with
 * (storage/lmdb/decision-records.ts), LZ4 with a dictionary made of one decision of the same policy (which also holds
 * the deployment's constants: bundle, manifest and runtime hashes, signer key id), and coded against a template of the
 * record's shape, as the sidecar stores records by default (audit/record-coding.ts; the read column then counts no
 * decoding).
 *
 * The records are the sidecar's own: the shipped payments.transfer decided by the runtime's Authorizer
 * (bench/soak/decisions.ts), keyed as `audit-decision-records` keys them ([recordedAt ms, fingerprint]). What differs
 * from one decision to the next in production differs here too: the executionId, its fingerprint, the times, the
 * signals hash and the signature are fresh per record (the soak's templates keep the template's signature, which
 * would flatter a dictionary). BENCH_RECORDS sets how many (default 50,000).
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSigningKeyPair, loadSigningKeyPem, type DecisionAuditRecord } from "@writ/runtime";
import { asBinary, open } from "lmdb";
import { encodeRecord, shapeOf, templateOf, type RecordTemplate } from "../sidecar/src/audit/record-coding.js";
import { SHIPPED_DICTIONARY } from "../sidecar/src/storage/lmdb/decision-dictionary.js";
import { compressionWith } from "../sidecar/src/storage/lmdb/decision-records.js";
import { loadCases } from "./sidecar/policy-cases.js";
import { policiesRoot } from "./sidecar/writ.js";
import { DecisionMaker } from "./soak/decisions.js";

const RECORDS = Number(process.env["BENCH_RECORDS"] ?? 50_000);
const PER_TRANSACTION = 1_000;
const START_MS = Date.parse("2026-01-01T00:00:00Z");

interface Stats {
  readonly pageSize: number;
  readonly treeBranchPageCount: number;
  readonly treeLeafPageCount: number;
  readonly overflowPages: number;
}

/** The i-th record, with every field that is unique in production made unique. */
function recordOf(maker: DecisionMaker, i: number): { key: [number, string]; record: DecisionAuditRecord } {
  const executionId = randomUUID();
  const at = START_MS + i * 37;
  const { fingerprint, options } = maker.make(i, executionId, at);
  const body = options.record!.body as DecisionAuditRecord;
  const fresh = (n: number) => createHash("sha512").update(`${executionId}/${n}`).digest();
  const attestation = { ...body.attestation, signalsHash: fresh(1).toString("hex").slice(0, 64), signature: fresh(2).toString("base64") };
  return { key: [at, fingerprint], record: { ...body, attestation } as DecisionAuditRecord };
}

/**
 * Codes a record's JSON as the sidecar does (storage/lmdb/record-templates.ts): the first record of a shape is stored
 * as JSON and kept as a sample, the second makes the shape's template with it, and later ones are coded against it
 * (audit/record-coding.ts).
 */
function templateCoder(): (record: DecisionAuditRecord) => Buffer {
  const shapes = new Map<string, { readonly sample: string } | { readonly id: number; readonly template: RecordTemplate }>();
  return (record) => {
    const text = JSON.stringify(record);
    const shape = shapeOf(record);
    const known = shapes.get(shape);
    if (known === undefined) shapes.set(shape, { sample: text });
    else if ("sample" in known) shapes.set(shape, { id: shapes.size, template: templateOf(known.sample, text) ?? { anchors: [] } });
    else return Buffer.from(encodeRecord(text, known.id, known.template) ?? text, "utf8");
    return Buffer.from(text, "utf8");
  };
}

async function measure(
  maker: DecisionMaker,
  name: string,
  compression: boolean | { dictionary: Buffer; threshold: number },
  code?: (record: DecisionAuditRecord) => Buffer,
) {
  const dir = await mkdtemp(join(tmpdir(), "writ-record-pages-"));
  const env = open({ path: dir, maxDbs: 2 });
  try {
    const db = env.openDB<DecisionAuditRecord, [number, string]>({ name: "records", encoding: "json", compression });
    const records = Array.from({ length: RECORDS }, (_, i) => recordOf(maker, i));
    const write = process.cpuUsage();
    for (let start = 0; start < RECORDS; start += PER_TRANSACTION) {
      await env.transaction(() => {
        for (const { key, record } of records.slice(start, start + PER_TRANSACTION))
          db.put(key, code === undefined ? record : (asBinary(code(record)) as unknown as DecisionAuditRecord));
      });
    }
    await env.flushed;
    const written = process.cpuUsage(write);
    const read = process.cpuUsage();
    let count = 0;
    if (code === undefined) {
      for (const { value } of db.getRange()) if (value.executionId !== "") count += 1;
    } else {
      for (const _ of db.getKeys()) count += 1;
    }
    const readCpu = process.cpuUsage(read);
    if (count !== RECORDS) throw new Error(`${name}: read ${count} records of ${RECORDS}`);
    const stats = db.getStats() as Stats;
    const pages = stats.treeBranchPageCount + stats.treeLeafPageCount + stats.overflowPages;
    return {
      name,
      bytes: (pages * stats.pageSize) / RECORDS,
      leaf: stats.treeLeafPageCount,
      overflow: stats.overflowPages,
      putUs: (written.user + written.system) / RECORDS,
      readUs: (readCpu.user + readCpu.system) / RECORDS,
    };
  } finally {
    await env.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const dir = await mkdtemp(join(tmpdir(), "writ-record-pages-policies-"));
try {
  await policiesRoot(dir);
  const key = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);
  const cases = await loadCases();
  const maker = await DecisionMaker.create(
    join(dir, "policies"),
    join(dir, "bundle-key.pub"),
    key,
    cases.valid.map((c) => c.signals),
  );
  const sizes = Array.from({ length: 100 }, (_, i) => Buffer.byteLength(JSON.stringify(recordOf(maker, i).record))).sort((a, b) => a - b);
  console.log(
    `${RECORDS.toLocaleString("en-US")} decisions of payments.transfer, ${sizes[0]} to ${sizes[sizes.length - 1]} bytes of JSON each (median ${sizes[50]})`,
  );
  const dictionary = Buffer.from(JSON.stringify(recordOf(maker, 1).record));
  const rows = [
    await measure(maker, "JSON (as stored now)", false),
    await measure(maker, "LZ4", true),
    await measure(maker, "LZ4, shipped dictionary", compressionWith(SHIPPED_DICTIONARY)),
    await measure(maker, "LZ4, same-policy dict.", compressionWith({ id: "same-policy", bytes: dictionary })),
    await measure(maker, "coded against templates", false, templateCoder()),
  ];
  const base = rows[0]!;
  for (const r of rows)
    console.log(
      `${r.name.padEnd(24)} ${r.bytes.toFixed(0).padStart(6)} bytes a decision (${(r.bytes / base.bytes).toFixed(2)}×), ` +
        `${r.leaf} leaf + ${r.overflow} overflow pages; put ${r.putUs.toFixed(1)} µs, read ${r.readUs.toFixed(1)} µs of CPU a record`,
    );
} finally {
  await rm(dir, { recursive: true, force: true });
}
