/**
 * What the tamper-evident audit record log costs per record, without HTTP (`npm run bench:record-log`). Not a test: it
 * prints numbers. On one LMDB environment, as the sidecar opens it, with the replay store writing each decision's record
 * in its consuming write (the sidecar's write path):
 *   - "write path": CPU (process.cpuUsage: every thread, LMDB's writer included) to consume and record N decisions with
 *     the log on, against the same with the log off, in the same run: what the log adds to each request;
 *   - "sequencing": CPU to append those N pending records to the log and sign a checkpoint (the background work);
 *   - the floor: CPU to consume N fingerprints with no audit at all, the least a durable sidecar does per request.
 * Rounds alternate the contenders; medians are printed, with each cost as a share of the sidecar's CPU per response
 * (BENCH_REQUEST_US, default 285 µs: writ's per-response CPU at 50 connections, docs/benchmarks.md).
 *
 * Last, the scan a restart after a crash makes (storage/lmdb/record-log-accounting.ts: every stored record the log lacks is
 * taken in): BENCH_SCAN_RECORDS decisions written and sequenced, then the trail opened again as after a crash of the
 * process that wrote them; the open's time per stored record is printed.
 *
 * Environment: BENCH_ROUNDS (default 5), BENCH_RECORDS (decisions per round, default 10,000), BENCH_SCAN_RECORDS
 * (default 100,000).
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { executionFingerprint, loadSigningKeyPem, NODE_ED25519, type ReplayStore } from "@writ/runtime";
import { LmdbReplayStore } from "@writ/runtime/lmdb";
import { open } from "lmdb";
import { LmdbAuditLog } from "../sidecar/src/storage/lmdb/audit-log.js";
import { decision } from "../sidecar/test/audit/support.js";
import { median } from "./sidecar/load.js";

const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 5);
const RECORDS = Number(process.env["BENCH_RECORDS"] ?? 10_000);
const REQUEST_US = Number(process.env["BENCH_REQUEST_US"] ?? 285);
const SCAN_RECORDS = Number(process.env["BENCH_SCAN_RECORDS"] ?? 100_000);
/** Decisions consumed at once, as concurrent requests are. */
const IN_FLIGHT = 50;
const key = loadSigningKeyPem(generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString());

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

interface Round {
  readonly writeUs: number;
  readonly sequenceUs: number;
}

/** N decisions consumed and recorded; with `log`, then sequenced and checkpointed. CPU µs per record of each part. */
async function round(mode: "log" | "nolog" | "floor", n: number, seed: number): Promise<Round> {
  const dir = await mkdtemp(join(tmpdir(), "writ-bench-record-log-"));
  const root = open({ path: dir, maxDbs: 32 });
  let replay: ReplayStore | null = null;
  const audit =
    mode === "floor"
      ? null
      : new LmdbAuditLog(root, {
          recordLog: mode === "log",
          checkpoints: { signer: { key, engine: NODE_ED25519 }, intervalMs: 3_600_000, everyRecords: 1_000_000_000 },
          decisionInstant: async (fp) => (await replay?.read(fp))?.createdAt,
        });
  replay = audit === null ? new LmdbReplayStore(root) : audit.recording(new LmdbReplayStore(root));
  const store = replay;
  try {
    const bodies = Array.from({ length: n }, (_, i) =>
      decision({ executionId: `bench-${seed}-${i}`, recordedAt: new Date(Date.UTC(2026, 0, 1) + i).toISOString() }),
    );
    const started = cpuMicros();
    for (let i = 0; i < n; i += IN_FLIGHT) {
      await Promise.all(
        bodies
          .slice(i, i + IN_FLIGHT)
          .map((body) =>
            store.consume(executionFingerprint(body.executionId), { now: Date.parse(body.recordedAt), record: { kind: "decision", body } }),
          ),
      );
    }
    await audit?.flushed();
    const written = cpuMicros();
    if (mode === "log") {
      const checkpoint = await audit!.recordLog!.checkpointNow();
      if (checkpoint?.size !== n) throw new Error(`the checkpoint covers ${checkpoint?.size ?? 0} records, not ${n}`);
    }
    return { writeUs: (written - started) / n, sequenceUs: (cpuMicros() - written) / n };
  } finally {
    await audit?.close();
    await store.close();
    await root.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`${ROUNDS} rounds × ${RECORDS} decisions per contender, ${IN_FLIGHT} in flight; CPU of every thread of this process`);
  const results = { log: [] as Round[], nolog: [] as Round[], floor: [] as Round[] };
  await round("log", 1_000, -1);
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of ["log", "nolog", "floor"] as const) {
      const result = await round(mode, RECORDS, r);
      results[mode].push(result);
      console.log(
        `  round ${r + 1} ${mode.padEnd(5)}: write path ${result.writeUs.toFixed(1)} µs/record${mode === "log" ? `, sequencing and checkpoint ${result.sequenceUs.toFixed(1)} µs/record` : ""}`,
      );
    }
  }
  const m = (mode: keyof typeof results, part: keyof Round) => median(results[mode].map((x) => x[part]));
  const added = m("log", "writeUs") - m("nolog", "writeUs");
  const sequencing = m("log", "sequenceUs");
  console.log(`\nmedians (µs of CPU per record):`);
  console.log(`  floor (consume, no audit)          ${m("floor", "writeUs").toFixed(1)}`);
  console.log(`  write path, log off                ${m("nolog", "writeUs").toFixed(1)}`);
  console.log(
    `  write path, log on                 ${m("log", "writeUs").toFixed(1)}  (+${added.toFixed(1)}: the leaf hash, the pending entry, and sequencing rounds run meanwhile)`,
  );
  console.log(`  sequencing and checkpoint          ${sequencing.toFixed(1)}`);
  console.log(
    `\nthe log's cost per record, ${(added + sequencing).toFixed(1)} µs, is ${(((added + sequencing) / REQUEST_US) * 100).toFixed(1)}% of a sidecar response's ${REQUEST_US} µs of CPU ` +
      `(the goal: the sidecar with the log at no less than 95% of its req/s without it)`,
  );
  await crashScan(SCAN_RECORDS);
}

/** N decisions written and sequenced; then the trail opened again while the writer's open mark stays, as after a crash. */
async function crashScan(n: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "writ-bench-record-log-scan-"));
  const root = open({ path: dir, maxDbs: 32 });
  const options = { checkpoints: { signer: { key, engine: NODE_ED25519 }, intervalMs: 3_600_000, everyRecords: 1_000_000_000 } };
  try {
    const audit = new LmdbAuditLog(root, options);
    const store = audit.recording(new LmdbReplayStore(root));
    for (let i = 0; i < n; i += IN_FLIGHT * 20) {
      const bodies = Array.from({ length: Math.min(IN_FLIGHT * 20, n - i) }, (_, j) =>
        decision({ executionId: `scan-${i + j}`, recordedAt: new Date(Date.UTC(2026, 0, 1) + i + j).toISOString() }),
      );
      await Promise.all(
        bodies.map((body) =>
          store.consume(executionFingerprint(body.executionId), { now: Date.parse(body.recordedAt), record: { kind: "decision", body } }),
        ),
      );
    }
    await audit.flushed();
    await audit.recordLog!.checkpointNow();
    // Not closed: its open mark stays, and this process's id under another mark is a process gone (open-marks.ts).
    const started = process.hrtime.bigint();
    const reopened = new LmdbAuditLog(root, options);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    console.log(`
the scan at a restart after a crash: ${n} decisions checked in ${ms.toFixed(0)} ms, ${((ms * 1000) / n).toFixed(2)} µs per stored record`);
    await reopened.close();
    await audit.close();
    await store.close();
  } finally {
    await root.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
