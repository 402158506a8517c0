/**
 * Bytes per decision over HTTP (`npm run bench:bytes`, i.e. `tsx bench/bytes-per-decision.ts`): the built sidecar
 * (`npm run build` first) on a fresh store with its default settings, BENCH_BYTES_DECISIONS `POST /evaluate` (default
 * 100,000) of the shipped policy's test cases in turn, each with its own executionId, at BENCH_BYTES_CONNECTIONS
 * keep-alive connections (default 16); then, the sidecar stopped, the store's size divided by the decisions answered
 * 200, judged against issue 40's targets (docs/running-for-years.md, "Bytes per decision"):
 * - LMDB: the data dir's allocated size (its files' blocks, as `du` counts them) ≤ 1,500 bytes a decision;
 * - PostgreSQL: its tables with their indexes and TOAST (`pg_total_relation_size`) ≤ 2,500.
 * Each part's share is printed as well (bench/soak/store.ts `storeSize`).
 *
 * Settings (environment): BENCH_BYTES_DECISIONS, BENCH_BYTES_CONNECTIONS, BENCH_BYTES_ENGINE (`lmdb`, `postgres`,
 * `both`: the default), BENCH_SOAK_DIR (where the stores and policies go, as bench:soak), BENCH_SOAK_PORT (the sidecar's
 * port, default any free one), WRIT_TEST_POSTGRES_URL (the server), BENCH_PG_DATABASE_PREFIX (the database is
 * `<prefix>bytes_<decisions>`, default prefix `writ_`). The stores are removed at the end.
 */
import { readdir, stat } from "node:fs/promises";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { loadCases, type Signals } from "./sidecar/policy-cases.js";
import { POLICY_ID, POLICY_VERSION } from "./soak/decisions.js";
import { soakSettings, type Engine } from "./soak/settings.js";
import { startSidecar } from "./soak/sidecar.js";
import { API_KEY, emptyStore, preparePolicies, removeStore, sidecarEnv, storeOf, storeSize, type Store } from "./soak/store.js";

const TARGET: Record<Engine, number> = { lmdb: 1_500, postgres: 2_500 };

function count(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : Number(raw.replaceAll("_", ""));
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not \`${raw}\``);
  return value;
}

/** One `POST /evaluate`; resolves with its status (0: no answer). */
function evaluate(agent: Agent, url: URL, body: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        agent,
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${API_KEY}`, "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.once("end", () => resolve(res.statusCode ?? 0));
        res.once("error", () => resolve(0));
      },
    );
    req.once("error", () => resolve(0));
    req.end(body);
  });
}

/** Sends `decisions` evaluations over `connections` keep-alive connections; the statuses answered, by status. */
async function load(base: string, decisions: number, connections: number, signalSets: readonly Signals[]): Promise<Map<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const url = new URL("/evaluate", base);
  const statuses = new Map<number, number>();
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let i = next++; i < decisions; i = next++) {
      const body = JSON.stringify({
        executionId: `bytes-${i}`,
        policyId: POLICY_ID,
        policyVersion: POLICY_VERSION,
        verifiedSignals: signalSets[i % signalSets.length],
      });
      const status = await evaluate(agent, url, body);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if ((i + 1) % 20_000 === 0)
        console.log(`  ${(i + 1).toLocaleString("en-US")} sent (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  agent.destroy();
  return statuses;
}

/** The blocks a directory's files take on the disk (what `du` counts), recursively. */
async function allocatedBytes(dir: string): Promise<number> {
  let bytes = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) bytes += await allocatedBytes(path);
    else bytes += (await stat(path)).blocks * 512;
  }
  return bytes;
}

async function main(): Promise<void> {
  const settings = soakSettings({ ...process.env, BENCH_SOAK_ENGINE: process.env["BENCH_BYTES_ENGINE"] ?? "both" });
  const decisions = count("BENCH_BYTES_DECISIONS", 100_000);
  const connections = count("BENCH_BYTES_CONNECTIONS", 16);
  const engines = settings.engines;
  await preparePolicies(settings);
  const signalSets = (await loadCases()).valid.map((c) => c.signals);
  let failed = false;
  for (const engine of engines) {
    const soakStore = storeOf(settings, engine, decisions);
    const databaseName = engine === "postgres" ? `${settings.databasePrefix}bytes_${decisions}` : null;
    const databaseUrl = databaseName === null ? null : Object.assign(new URL(settings.postgresUrl), { pathname: `/${databaseName}` }).href;
    const store: Store = { ...soakStore, dir: join(settings.root, `${engine}-bytes-${decisions}`), databaseName, databaseUrl };
    await emptyStore(settings, store);
    try {
      const sidecar = await startSidecar(sidecarEnv(store), null, join(settings.root, `${engine}-bytes.log`));
      let statuses: Map<number, number>;
      try {
        console.log(`${engine}: ${decisions.toLocaleString("en-US")} POST /evaluate at ${connections} connections to ${sidecar.url}`);
        statuses = await load(sidecar.url, decisions, connections, signalSets);
      } finally {
        await sidecar.stop();
      }
      const answered = statuses.get(200) ?? 0;
      const size = await storeSize(store);
      const bytes = engine === "lmdb" ? await allocatedBytes(store.dir) : size.bytes;
      const perDecision = bytes / Math.max(1, answered);
      const what = engine === "lmdb" ? "the data dir's allocated size" : "tables, indexes and TOAST";
      console.log(`  answered: ${[...statuses].map(([status, n]) => `${n} × ${status}`).join(", ")}`);
      for (const part of size.parts) {
        if (part.bytes === 0) continue;
        console.log(`  ${part.name.padEnd(32)} ${(part.bytes / Math.max(1, answered)).toFixed(0).padStart(6)} bytes a decision`);
      }
      const ok = perDecision <= TARGET[engine] && answered === decisions;
      failed ||= !ok;
      console.log(
        `  ${ok ? "PASS" : "FAIL"}  ${what}: ${bytes.toLocaleString("en-US")} bytes / ${answered.toLocaleString("en-US")} decisions answered 200 = ${perDecision.toFixed(0)} bytes a decision ≤ ${TARGET[engine].toLocaleString("en-US")}`,
      );
    } finally {
      await removeStore(settings, store);
    }
  }
  if (failed) process.exitCode = 1;
}

await main();
