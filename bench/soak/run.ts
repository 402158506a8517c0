/**
 * One soak run on a seeded store:
 * 1. arming (seed.ts `arm`): decisions past the retention the run is given, replay entries expiring during the run;
 * 2. the built sidecar started on the store, pinned to its cores, with that retention and the short sweep and prune
 *    intervals (SERVICE_REPLAY_SWEEP_INTERVAL_MS, SERVICE_AUDIT_PRUNE_INTERVAL_MS);
 * 3. quiet: up to three tail exports from the latest checkpoint (the Done-when's 2 KB tail export), and the stats;
 * 4. a warm-up of unmeasured load, then the measured load (wrk.ts) with the probes beside it (probes.ts), all at once;
 * 5. the sidecar stopped, and the store opened again to check what the sweeps and the retention run removed.
 */
import { mkdir } from "node:fs/promises";
import { Agent } from "node:http";
import { join } from "node:path";
import type { Signals } from "../sidecar/policy-cases.js";
import { ID_SLOT, runWrk, type WrkResult } from "../sidecar/wrk.js";
import { POLICY_ID, POLICY_VERSION } from "./decisions.js";
import { decisionMaker } from "./prepare.js";
import { Probes, type Answer, type ProbeResults } from "./probes.js";
import { arm, armedLeft } from "./seed.js";
import type { SoakSettings } from "./settings.js";
import { processUsage, startSidecar, type ProcessUsage } from "./sidecar.js";
import { sampleCoreWait, type CoreWait } from "./core-wait.js";
import { localDatabaseServer } from "./database-server.js";
import { API_KEY, openStore, sidecarEnv, storeSize, type SeedManifest, type Store, type StoreSize } from "./store.js";

export interface RunResult {
  readonly store: Store;
  readonly decisionsAtStart: number;
  readonly evaluate: WrkResult;
  readonly probes: ProbeResults;
  /** The quiet tail exports before the load. */
  readonly quietTails: readonly Answer[];
  /** When the sidecar listened (performance.now()); when the load ran and the sweeps and prunes were due, in seconds after. */
  readonly timeline: {
    readonly listeningAt: number;
    readonly loadFrom: number;
    readonly loadTo: number;
    readonly sweeps: readonly number[];
    readonly prunes: readonly number[];
  };
  readonly armed: {
    readonly due: number;
    readonly dueLeft: number;
    readonly expiring: number;
    readonly expiringLeft: number;
    readonly expiredBeforeLastSweep: number;
    readonly retentionDays: number;
  };
  /** What the sidecar logged while running (warn and above), by message. */
  readonly sidecarMessages: ReadonlyMap<string, number>;
  /** What the sidecar used during the measured load. */
  readonly usage: ProcessUsage;
  /** How long the sidecar's event loop waited for its core during the measured load; null where /proc cannot say. */
  readonly coreWait: CoreWait | null;
  /** The local PostgreSQL server during the measured load: its CPU seconds, and the cores it was moved to; null: none measured. */
  readonly database: { readonly cpuSeconds: number; readonly cpus: string | null } | null;
  /** The same load and probes without the export, after the measured load (BENCH_SOAK_REFERENCE); null when not run. */
  readonly reference: { readonly seconds: number; readonly requests: number; readonly usage: ProcessUsage } | null;
  readonly sizeAfter: StoreSize;
}

async function getJson(url: string, apiKey: string): Promise<unknown> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
  if (!response.ok) throw new Error(`GET ${url} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  return response.json();
}

/** Times within (0, to] at which a timer of `every` ms started at 0 fires, in seconds. */
function firings(everyMs: number, toSeconds: number): number[] {
  const out: number[] = [];
  for (let t = everyMs / 1000; t <= toSeconds; t += everyMs / 1000) out.push(t);
  return out;
}

const usedBetween = (before: ProcessUsage, after: ProcessUsage): ProcessUsage => ({
  cpuSeconds: after.cpuSeconds - before.cpuSeconds,
  majorFaults: after.majorFaults - before.majorFaults,
});

/** `load` run for `seconds` with `probes` (the same, but the export) beside it: what the sidecar `pid` used meanwhile. */
async function withoutExport(
  seconds: number,
  pid: number,
  probes: Probes,
  load: () => Promise<WrkResult>,
): Promise<NonNullable<RunResult["reference"]>> {
  probes.start(performance.now() + seconds * 1000);
  const before = processUsage(pid);
  const result = await load();
  const after = processUsage(pid);
  await probes.stop();
  return { seconds, requests: result.requests, usage: usedBetween(before, after) };
}

export async function runOnce(
  settings: SoakSettings,
  store: Store,
  manifest: SeedManifest,
  signalSets: readonly Signals[],
  tag: string,
): Promise<RunResult> {
  const label = `${store.engine} ${store.decisions.toLocaleString("en-US")}`;
  const maker = await decisionMaker(store);
  // Entries expire from 10 s after the sidecar is expected to listen to the end of the load. Its start takes about as
  // long as this open (both rebuild the LMDB replay store's fingerprint set), so they begin that much later.
  const windowMs = (settings.warmupSeconds + settings.durationSeconds + 5) * 1000;
  const opening = performance.now();
  let backend = await openStore(store);
  const openMs = Math.round(performance.now() - opening);
  const armedAt = Date.now();
  const from = armedAt + 10_000 + openMs;
  const armed = await arm(backend, maker, manifest, settings.due, settings.expiring, from, windowMs, tag).finally(() => backend.close());
  console.log(
    `  ${label}: armed ${settings.due} decisions past a retention of ${armed.retentionDays} days and ${settings.expiring} replay entries expiring during the run`,
  );

  const logs = join(settings.root, "logs");
  await mkdir(logs, { recursive: true });
  const logFile = join(logs, `${store.engine}-${store.decisions}-${tag}.log`);
  const env = sidecarEnv(store, {
    SERVICE_AUDIT_DECISIONS_RETENTION_DAYS: String(armed.retentionDays),
    SERVICE_REPLAY_SWEEP_INTERVAL_MS: String(settings.sweepIntervalMs),
    SERVICE_AUDIT_PRUNE_INTERVAL_MS: String(settings.pruneIntervalMs),
  });
  const server = store.engine === "postgres" ? await localDatabaseServer(settings) : null;
  const unpin = server !== null && settings.databaseCpus !== null ? server.pin(settings.databaseCpus) : null;
  if (unpin !== null)
    console.log(`  ${label}: the PostgreSQL server (pid ${server!.pid}) moved to cpus ${settings.databaseCpus} for the run`);
  let sidecar: Awaited<ReturnType<typeof startSidecar>>;
  const started = performance.now();
  try {
    sidecar = await startSidecar(env, settings.cpus?.sidecar ?? null, logFile, settings.nodeArgs);
  } catch (error) {
    unpin?.();
    throw error;
  }
  let result: Omit<RunResult, "armed" | "sizeAfter">;
  try {
    console.log(
      `  ${label}: sidecar listening after ${((sidecar.listeningAt - started) / 1000).toFixed(1)} s (pid ${sidecar.pid}${settings.cpus === null ? "" : `, cpus ${settings.cpus.sidecar}; load and probes on ${settings.cpus.load}`}; output in ${logFile})`,
    );
    const targets = {
      url: sidecar.url,
      apiKey: API_KEY,
      knownExecutionId: `soak-${Math.floor(store.decisions / 2)}`,
      healthEveryMs: settings.healthEveryMs,
      exports: settings.exports,
      diskProbeFile: join(logs, `disk-probe-${tag}`),
    };
    const probes = new Probes(targets);
    const quiet = new Agent({ keepAlive: true, maxSockets: 1 });
    const quietTails: Answer[] = [];
    // Three, unless one takes seconds (a scan of the whole store): the load then starts after the first.
    for (let i = 0; i < 3 && !quietTails.some((t) => t.ms > 1_000); i++) {
      const tail = await probes.tailExport(quiet);
      if (tail !== null) quietTails.push(tail);
    }
    quiet.destroy();
    const stats = (await getJson(`${sidecar.url}/audit/stats`, API_KEY)) as { total_decisions: string };
    const wrk = {
      url: `${sidecar.url}/evaluate`,
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${API_KEY}` },
      bodies: signalSets.map((signals) =>
        JSON.stringify({ executionId: ID_SLOT, policyId: POLICY_ID, policyVersion: POLICY_VERSION, verifiedSignals: signals }),
      ),
      connections: settings.connections,
      cpus: settings.cpus?.load ?? null,
      rate: settings.rate,
      scriptFile: join(logs, `wrk-${tag}.lua`),
    };
    if (settings.warmupSeconds > 0) await runWrk({ ...wrk, seconds: settings.warmupSeconds, prefix: `soak-warm-${tag}-` });
    const loadFrom = (performance.now() - sidecar.listeningAt) / 1000;
    probes.start(performance.now() + settings.durationSeconds * 1000);
    const usedBefore = processUsage(sidecar.pid);
    const coreWait = sampleCoreWait(sidecar.pid);
    const databaseUse = server?.measure() ?? null;
    const evaluate = await runWrk({ ...wrk, seconds: settings.durationSeconds, prefix: `soak-load-${tag}-` });
    const usedAfter = processUsage(sidecar.pid);
    const waited = coreWait.stop();
    const databaseCpuSeconds = databaseUse?.stop() ?? null;
    const loadTo = (performance.now() - sidecar.listeningAt) / 1000;
    const probed = await probes.stop();
    const reference =
      settings.referenceSeconds > 0 && settings.exports !== "off"
        ? await withoutExport(settings.referenceSeconds, sidecar.pid, new Probes({ ...targets, exports: "off" }), () =>
            runWrk({ ...wrk, seconds: settings.referenceSeconds, prefix: `soak-ref-${tag}-` }),
          )
        : null;
    result = {
      store,
      decisionsAtStart: Number(stats.total_decisions),
      evaluate,
      probes: probed,
      quietTails,
      timeline: {
        listeningAt: sidecar.listeningAt,
        loadFrom,
        loadTo,
        sweeps: firings(settings.sweepIntervalMs, loadTo),
        prunes: firings(settings.pruneIntervalMs, loadTo),
      },
      sidecarMessages: sidecar.messages(),
      usage: usedBetween(usedBefore, usedAfter),
      coreWait: waited,
      database:
        databaseCpuSeconds === null ? null : { cpuSeconds: databaseCpuSeconds, cpus: unpin === null ? null : settings.databaseCpus },
      reference,
    };
  } finally {
    await sidecar.stop();
    unpin?.();
  }
  backend = await openStore(store);
  const left = await armedLeft(backend, armed).finally(() => backend.close());
  const lastSweep = result.timeline.sweeps.at(-1);
  const lastSweepAt = lastSweep === undefined ? -Infinity : performance.timeOrigin + sidecar.listeningAt + lastSweep * 1000;
  return {
    ...result,
    armed: {
      due: armed.dueIds.length,
      dueLeft: left.dueLeft,
      expiring: armed.expiring.length,
      expiringLeft: left.expiringLeft,
      expiredBeforeLastSweep: armed.expiring.filter((e) => e.expiresAt <= lastSweepAt).length,
      retentionDays: armed.retentionDays,
    },
    sizeAfter: await storeSize(store),
  };
}
