/**
 * The soak's report: per engine, the small and the large store side by side, the ratio, and each of the soak's targets
 * (docs/benchmarks.md, "Soak") judged on the large store (PASS/FAIL).
 */
import type { Answer, Histogram } from "./probes.js";
import type { RunResult } from "./run.js";
import { DEFAULT_EXPORT_DISK_READS } from "../../sidecar/src/storage/lmdb/read-pacer.js";

/**
 * How many observations a cumulative histogram counted above `le` seconds (one of its bounds; 0: all of them).
 */
function over(h: Histogram, le: number): number {
  const total = h.get(Infinity) ?? 0;
  return le === 0 ? total : total - (h.get(le) ?? 0);
}

/**
 * The `q` quantile (0..1) of a cumulative histogram, in ms, interpolated linearly within the bucket that holds it, as
 * Prometheus's `histogram_quantile` does (the bucket's upper bound when it is the last finite one's `+Inf`); NaN when it
 * counted nothing.
 */
export function histogramQuantileMs(h: Histogram, q: number): number {
  const total = h.get(Infinity) ?? 0;
  if (total === 0) return Number.NaN;
  const target = q * total;
  let lower = 0;
  let below = 0;
  for (const bound of [...h.keys()].sort((a, b) => a - b)) {
    const counted = h.get(bound)!;
    if (counted >= target) {
      if (bound === Infinity) return lower * 1000;
      return (lower + ((bound - lower) * (target - below)) / Math.max(1, counted - below)) * 1000;
    }
    lower = bound;
    below = counted;
  }
  return lower * 1000;
}

/**
 * The export's share of the sidecar: what it used a second during the measured load, less what it used a second in
 * the reference run without the export (the same load and probes): of the core (CPU seconds a second) and of the disk
 * reads (major faults). Null without a reference run.
 */
function exportShare(r: RunResult): { readonly core: number; readonly diskReads: number; readonly readsPerSecond: number } | null {
  if (r.reference === null) return null;
  const withExport = { cpu: r.usage.cpuSeconds / r.evaluate.seconds, faults: r.usage.majorFaults / r.evaluate.seconds };
  const without = { cpu: r.reference.usage.cpuSeconds / r.reference.seconds, faults: r.reference.usage.majorFaults / r.reference.seconds };
  const extraFaults = Math.max(0, withExport.faults - without.faults);
  return {
    core: Math.max(0, withExport.cpu - without.cpu),
    diskReads: withExport.faults === 0 ? 0 : extraFaults / withExport.faults,
    readsPerSecond: extraFaults,
  };
}

/** Nearest-rank percentile, `p` in 0..100; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const max = (values: readonly number[]) => (values.length === 0 ? Number.NaN : values.reduce((a, b) => Math.max(a, b), -Infinity));
const ms = (v: number) => (Number.isNaN(v) ? "–" : v >= 100 ? `${v.toFixed(0)} ms` : `${v.toFixed(2)} ms`);
const int = (v: number) => v.toLocaleString("en-US");
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
/** Answers that failed: a status other than 2xx, no answer, or an answer the server cut short. */
const non2xx = (answers: readonly Answer[]) => answers.filter((a) => a.status < 200 || a.status > 299 || a.cut).length;
/** Exports that failed: a status other than 200, or ended by the server midway. */
const failedExports = (r: RunResult) => r.probes.exports.filter((x) => x.status !== 200 || x.end === "failed").length;

/** The figures of one run, by row name, as printed and as judged. */
function figures(r: RunResult): Map<string, string> {
  const e = r.evaluate;
  const health = r.probes.health.map((a) => a.ms);
  const worstHealth = r.probes.health.reduce<Answer | null>((w, a) => (w === null || a.ms > w.ms ? a : w), null);
  const complete = r.probes.exports.filter((x) => x.end === "complete");
  const partial = r.probes.exports.find((x) => x.end === "load end");
  const tails = r.probes.tails.map((a) => a.ms);
  const f = new Map<string, string>();
  f.set("decisions at start", int(r.decisionsAtStart));
  f.set("/evaluate responses (req/s)", `${int(e.requests)} (${(e.requests / e.seconds).toFixed(0)})`);
  f.set("/evaluate p50", ms(e.p50));
  f.set("/evaluate p99", ms(e.p99));
  f.set("/evaluate p99.9", ms(e.p999));
  f.set("/evaluate max", ms(e.max));
  const sockets = e.socketErrors.connect + e.socketErrors.read + e.socketErrors.write + e.socketErrors.timeout;
  f.set("/evaluate non-2xx, socket errors", `${int(e.non2xx)}, ${int(sockets)}`);
  f.set("/health polls, p99, max", `${int(health.length)}, ${ms(percentile(health, 99))}, ${ms(max(health))}`);
  f.set(
    "/health slowest at",
    worstHealth === null ? "–" : `+${((worstHealth.at - r.timeline.listeningAt) / 1000).toFixed(1)} s after start`,
  );
  f.set("/health non-2xx", int(non2xx(r.probes.health)));
  f.set("event-loop delay max", `${ms(r.probes.loopDelay.maxSeconds * 1000)} (${r.probes.loopDelay.scrapes} scrapes)`);
  const h = r.probes.loopDelay.histogram;
  if (h !== null) f.set("event-loop delay samples > 50 ms", `${int(over(h, 0.05))} of ${int(over(h, 0))}`);
  const inSidecar = r.probes.evaluateInSidecar;
  if (inSidecar !== null) {
    f.set("/evaluate in the sidecar > 50, 100, 250 ms", [0.05, 0.1, 0.25].map((le) => int(over(inSidecar, le))).join(", "));
    f.set("/evaluate in the sidecar p50, p99, p99.9", [0.5, 0.99, 0.999].map((q) => ms(histogramQuantileMs(inSidecar, q))).join(", "));
  }
  const healthInSidecar = r.probes.healthInSidecar;
  if (healthInSidecar !== null)
    f.set("/health in the sidecar > 50 ms", `${int(over(healthInSidecar, 0.05))} of ${int(over(healthInSidecar, 0))}`);
  f.set(
    "whole exports done (each)",
    complete.length === 0
      ? "0"
      : `${complete.length}: ${complete
          .map((x) => `${(x.ms / 1000).toFixed(1)} s ${mb(x.bytes)}`)
          .slice(0, 3)
          .join(", ")}${complete.length > 3 ? ", …" : ""}`,
  );
  f.set(
    "whole export cut at load end",
    partial === undefined
      ? "–"
      : `${mb(partial.bytes)} in ${(partial.ms / 1000).toFixed(1)} s (${mb((partial.bytes * 1000) / Math.max(1, partial.ms))}/s)`,
  );
  f.set("exports failed (non-200 or cut by the server)", int(failedExports(r)));
  f.set(
    "tail export quiet (slowest), bytes",
    r.quietTails.length === 0
      ? "no checkpoint"
      : `${ms(max(r.quietTails.map((a) => a.ms)))}, ${int(max(r.quietTails.map((a) => a.bytes)))} B${non2xx(r.quietTails) > 0 ? ", FAILED" : ""}`,
  );
  f.set(
    "tail export under load n, p50, max",
    `${tails.length}, ${ms(percentile(tails, 50))}, ${ms(max(tails))}${non2xx(r.probes.tails) > 0 ? `, ${non2xx(r.probes.tails)} failed` : ""}`,
  );
  for (const [name, answers] of r.probes.queries) {
    const t = answers.map((a) => a.ms);
    const bad = non2xx(answers.filter((a) => name !== "proofs/inclusion" || a.status !== 404));
    f.set(`query ${name} n, p50, max`, `${t.length}, ${ms(percentile(t, 50))}, ${ms(max(t))}${bad > 0 ? `, ${bad} non-2xx` : ""}`);
  }
  f.set(
    "sweeps removed (of due by last sweep)",
    `${int(r.armed.expiring - r.armed.expiringLeft)} of ${int(r.armed.expiring)} (${int(r.armed.expiredBeforeLastSweep)})`,
  );
  f.set("retention removed (due)", `${int(r.armed.due - r.armed.dueLeft)} (${int(r.armed.due)}, retention ${r.armed.retentionDays} days)`);
  f.set(
    "probe errors, sidecar warnings and errors",
    `${r.probes.errors.length}, ${[...r.sidecarMessages.values()].reduce((a, b) => a + b, 0)}`,
  );
  const disk = r.probes.diskWrites;
  f.set(
    "disk: durable 4 KB write n, p50, p99.9, max",
    `${int(disk.length)}, ${ms(percentile(disk, 50))}, ${ms(percentile(disk, 99.9))}, ${ms(max(disk))}`,
  );
  f.set("sidecar CPU per /evaluate (all work)", `${((r.usage.cpuSeconds * 1e6) / Math.max(1, e.requests)).toFixed(0)} µs`);
  f.set(
    "sidecar major page faults (disk reads)",
    `${int(r.usage.majorFaults)} (${(r.usage.majorFaults / Math.max(1, e.requests)).toFixed(2)} per request)`,
  );
  f.set("this process's own max loop delay", ms(r.probes.ownDelayMaxMs));
  if (r.coreWait !== null)
    f.set(
      "sidecar loop a second: ran, waited for its core; most waited in 100 ms",
      `${r.coreWait.runMsPerSecond.toFixed(0)} ms, ${r.coreWait.waitMsPerSecond.toFixed(1)} ms; ${ms(r.coreWait.largestInWindowMs)}`,
    );
  if (r.database !== null)
    f.set(
      "database server CPU a request (its cores)",
      `${((r.database.cpuSeconds * 1e6) / Math.max(1, e.requests)).toFixed(0)} µs (${r.database.cpus ?? "unpinned"})`,
    );
  const share = exportShare(r);
  if (share !== null) {
    f.set(
      "export's share: core, disk reads",
      `${(100 * share.core).toFixed(1)} %, ${(100 * share.diskReads).toFixed(1)} % (${share.readsPerSecond.toFixed(0)}/s)`,
    );
  }
  f.set(
    "store after (live bytes)",
    `${mb(r.sizeAfter.bytes)}${r.sizeAfter.fileBytes === null ? "" : `; data.mdb ${mb(r.sizeAfter.fileBytes)}`}`,
  );
  return f;
}

function verdict(ok: boolean): string {
  return ok ? "PASS" : "FAIL";
}

export function printReport(engine: string, small: RunResult, large: RunResult, paced: boolean): void {
  const a = figures(small);
  const b = figures(large);
  const label = (r: RunResult) => r.store.decisions.toLocaleString("en-US");
  console.log(
    `\n${engine}: the same run on ${label(small)} and ${label(large)} decisions (load from +${large.timeline.loadFrom.toFixed(1)} s to +${large.timeline.loadTo.toFixed(1)} s after start; sweeps at ${large.timeline.sweeps.map((s) => `+${s.toFixed(0)}`).join(", ")} s; prunes at ${large.timeline.prunes.map((s) => `+${s.toFixed(0)}`).join(", ")} s)`,
  );
  console.log(`${"".padEnd(40)}${label(small).padStart(34)}${label(large).padStart(34)}`);
  for (const [row, value] of b) console.log(`${row.padEnd(40)}${(a.get(row) ?? "").padStart(34)}${value.padStart(34)}`);

  for (const r of [small, large]) {
    for (const [message, n] of r.sidecarMessages) console.log(`  sidecar on ${label(r)} logged ${n} × ${message}`);
    for (const error of r.probes.errors.slice(0, 5)) console.log(`  probe error on ${label(r)}: ${error}`);
  }
  const e = large.evaluate;
  const ratio = e.p999 / small.evaluate.p999;
  const healthMax = max(large.probes.health.map((x) => x.ms));
  const delayMs = large.probes.loopDelay.maxSeconds * 1000;
  const quietTail = max(large.quietTails.map((x) => x.ms));
  const exported = large.probes.exports.length > 0 && failedExports(large) === 0;
  const exportNote = large.probes.exports.length === 0 ? "none ran (BENCH_SOAK_EXPORTS=off)" : `${large.probes.exports.length} started`;
  console.log(
    `\nratios, ${label(large)} / ${label(small)}: p50 ${(e.p50 / small.evaluate.p50).toFixed(2)}×, p99 ${(e.p99 / small.evaluate.p99).toFixed(2)}×, p99.9 ${ratio.toFixed(2)}×, max ${(e.max / small.evaluate.max).toFixed(2)}×, req/s ${(e.requests / e.seconds / (small.evaluate.requests / small.evaluate.seconds)).toFixed(2)}×`,
  );
  console.log(`Done-when targets at ${label(large)} decisions (${engine}), in the sidecar's own timing:`);
  const inSidecar = large.probes.evaluateInSidecar;
  const smallInSidecar = small.probes.evaluateInSidecar;
  if (inSidecar === null || smallInSidecar === null) {
    console.log("  FAIL  the sidecar's `writ_http_request_duration_seconds` was not found in /metrics: nothing to judge by");
  } else {
    const slow = over(inSidecar, 0.1);
    console.log(
      `  ${verdict(slow === 0)}  no /evaluate answer over 100 ms in the sidecar's own timing: ${int(slow)} of ${int(over(inSidecar, 0))} (the load generator's max ${ms(e.max)}; the disk's own slowest durable 4 KB write meanwhile ${ms(max(large.probes.diskWrites))})`,
    );
    const p999 = histogramQuantileMs(inSidecar, 0.999);
    const smallP999 = histogramQuantileMs(smallInSidecar, 0.999);
    const sidecarRatio = p999 / smallP999;
    console.log(
      `  ${verdict(sidecarRatio <= 1.2)}  its p99.9 ${ms(p999)} ≤ 1.2 × its p99.9 at ${label(small)} (${ms(smallP999)}): ${sidecarRatio.toFixed(2)}× (the load generator's: ${ratio.toFixed(2)}×)`,
    );
  }
  const waited = large.coreWait === null ? "" : `; the loop waited for its core at most ${ms(large.coreWait.largestInWindowMs)} in 100 ms`;
  console.log(
    `  ${verdict(delayMs <= 50)}  largest event-loop delay ${ms(delayMs)} ≤ 50 ms (${large.probes.loopDelay.metric ?? "no metric found"}${waited})`,
  );
  const share = exportShare(large);
  if (share === null) {
    console.log("  –     the export's share of the core and of the disk reads: no reference run (BENCH_SOAK_REFERENCE=0, or no export)");
  } else if (!paced) {
    console.log(
      `  –     the export's share: core ${(100 * share.core).toFixed(1)} %, disk reads ${(100 * share.diskReads).toFixed(1)} %, not judged: an unpaced load takes whatever the export leaves (set BENCH_SOAK_RATE)`,
    );
  } else {
    console.log(
      `  ${verdict(share.core <= 0.25)}  the export's share of the core ${(100 * share.core).toFixed(1)} % ≤ 25 % (its pacing: docs/audit.md)`,
    );
    // The bound allows a second's worth at once: over the run, at most a second's worth more than the rate.
    const bound = engine === "LMDB" ? DEFAULT_EXPORT_DISK_READS * (1 + 1 / large.evaluate.seconds) : null;
    console.log(
      bound === null
        ? `  –     the export's disk reads: ${share.readsPerSecond.toFixed(1)} a second in the sidecar (the database's reads are its server's)`
        : `  ${verdict(share.readsPerSecond <= bound)}  the export's disk reads ${share.readsPerSecond.toFixed(1)} a second ≤ SERVICE_EXPORT_DISK_READS ${DEFAULT_EXPORT_DISK_READS} and a second's burst (${(100 * share.diskReads).toFixed(1)} % of the sidecar's reads)`,
    );
  }
  // Judged, as /evaluate is, by the sidecar's own timing: the probe shares its core with the load generator.
  const healthInSidecar = large.probes.healthInSidecar;
  const slowHealth = healthInSidecar === null ? null : over(healthInSidecar, 0.05);
  console.log(
    slowHealth === null
      ? "  FAIL  /health: the sidecar's `writ_http_request_duration_seconds` for it was not found in /metrics"
      : `  ${verdict(slowHealth === 0 && non2xx(large.probes.health) === 0)}  /health within 50 ms throughout in the sidecar's own timing: ${int(slowHealth)} of ${int(over(healthInSidecar!, 0))} over (the probe's slowest ${ms(healthMax)}), ${non2xx(large.probes.health)} non-2xx`,
  );
  console.log(
    `  ${verdict(exported && e.non2xx === 0)}  a whole-log export ran beside the load (${exportNote}), none failed (${failedExports(large)} did), with no /evaluate refused (${e.non2xx} non-2xx)`,
  );
  console.log(
    `  ${verdict(quietTail < 100 && large.quietTails.length > 0 && non2xx(large.quietTails) === 0)}  tail export from the latest checkpoint ${ms(quietTail)} < 100 ms (${int(max(large.quietTails.map((x) => x.bytes)))} bytes)`,
  );
}
