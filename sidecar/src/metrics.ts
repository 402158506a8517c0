/**
 * Prometheus metrics (prom-client), served on `GET /metrics` behind the reading key (docs/sidecar.md, "Metrics").
 * INVARIANT (bounded labels): no label takes a value a caller chose. Routes are their patterns, never the raw URL;
 * policies, versions and rules are the ids of a bundle that decided (a bundle the sidecar serves), never the ids a
 * request asked for, so an unknown policyId mints no label.
 */
import type { FastifyInstance } from "fastify";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { BundleLoadTotal } from "@writ/runtime";
import type { SidecarContext } from "./context.js";
import type { SigningPool } from "./signing/pool.js";
import { EventLoopDelay, SAMPLE_INTERVAL_MS } from "./observability/event-loop-delay.js";
import { snapshotSeries, type ScrapedSeries } from "./observability/series.js";
import { isMember, membersMetrics, shareMetrics } from "./processes/member.js";

export interface Metrics {
  readonly registry: Registry;
  /** What `/metrics` answers: the registry's series, or of a sidecar of several processes, all of theirs summed. */
  exposition(): Promise<string>;
  /** Counts and times every answered request, and the decisions and durable writes of the decision routes. */
  instrument(app: FastifyInstance, surface: "a" | "b"): void;
  /**
   * The largest event-loop delay of the last few seconds, in whole milliseconds (`event_loop_lag_ms` of `/health`):
   * `EventLoopDelay.recentMaxMs`. 0 while no instrumented app is ready.
   */
  eventLoopLagMs(): number;
}

/** What the gauges read at each scrape: the bundles (`bundles` of `/health`, the loads), the audit's health, the storage engine's series. */
export type MetricSources = Pick<SidecarContext, "bundles" | "audit" | "storeSeries" | "signingPool">;

/** The route label of a request no route matched. */
const NO_ROUTE = "(no route)";

export function createMetrics(sources?: MetricSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "writ_" });
  if (sources) sourceMetrics(registry, sources);
  const duration = new Histogram({
    name: "writ_http_request_duration_seconds",
    help: "Time from request received to response sent, by surface, method, route pattern and status",
    labelNames: ["surface", "method", "route", "status"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const decisions = new Counter({
    name: "writ_decisions_total",
    help: "Signed decisions answered, by surface, route pattern, policy, policy version, verdict and rule",
    labelNames: ["surface", "route", "policy_id", "policy_version", "verdict", "rule"] as const,
    registers: [registry],
  });
  const writes = new Histogram({
    name: "writ_store_write_duration_seconds",
    help: "Time a durable write of a decision route took until it was on disk (or in the database), by surface and route pattern",
    labelNames: ["surface", "route"] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  const eventLoop = eventLoopMetrics(registry);
  shareMetrics(registry);
  return {
    registry,
    exposition: () => (isMember() ? membersMetrics() : registry.metrics()),
    eventLoopLagMs: () => Math.round(eventLoop.recentMaxMs()),
    instrument(app, surface) {
      // The loop is sampled while any instrumented app is open (both surfaces share one sampler).
      let release: (() => void) | null = null;
      app.addHook("onReady", async () => {
        release ??= eventLoop.hold();
      });
      app.addHook("onClose", async () => {
        release?.();
      });
      app.addHook("onResponse", async (request, reply) => {
        const route = request.routeOptions.url ?? NO_ROUTE;
        duration.observe({ surface, method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
        const decision = request.decision;
        if (decision === null) return;
        for (const phase of decision.phases)
          if (phase.phase === "write") writes.observe({ surface, route }, (phase.end - phase.start) / 1000);
        const decided = decision.decided;
        if (decided !== undefined && reply.statusCode < 300) {
          decisions.inc({
            surface,
            route,
            policy_id: decided.policyId,
            policy_version: decided.policyVersion,
            verdict: decided.verdict,
            rule: decided.ruleId,
          });
        }
      });
    },
  };
}

/**
 * The event-loop delay (docs/sidecar.md, "Metrics"): every sample in a histogram (cumulative, so `rate()` and
 * quantiles over any window, summed over instances), and the largest since the previous scrape, so whoever polls
 * `/metrics` sees every stall, however short its scrape interval. prom-client's default
 * `writ_nodejs_eventloop_lag_*` gauges are kept beside them (dashboards expect them); what differs is in the docs.
 */
function eventLoopMetrics(registry: Registry): EventLoopDelay {
  const delays = new Histogram({
    name: "writ_event_loop_delay_seconds",
    help: `How late the event loop ran a timer due every ${SAMPLE_INTERVAL_MS} ms (0 when on time): what a request arriving then waited`,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const eventLoop = new EventLoopDelay((delayMs) => delays.observe(delayMs / 1000));
  new Gauge({
    name: "writ_event_loop_delay_max_seconds",
    aggregator: "max",
    help: "The largest event-loop delay since the previous scrape",
    registers: [registry],
    collect() {
      this.set(eventLoop.takeMaxMs() / 1000);
    },
  });
  return eventLoop;
}

/** Read at each scrape, so they cost nothing between scrapes. */
function sourceMetrics(registry: Registry, sources: MetricSources): void {
  const bundles = () => sources.bundles.health();
  new Gauge({
    name: "writ_bundles_ready",
    aggregator: "min",
    help: "1 while a policy bundle is served (readiness), 0 otherwise",
    registers: [registry],
    collect() {
      this.set(bundles().ready ? 1 : 0);
    },
  });
  new Gauge({
    name: "writ_bundles_served",
    aggregator: "min",
    help: "Policy bundles served now",
    registers: [registry],
    collect() {
      this.set(bundles().served);
    },
  });
  new Counter({
    name: "writ_bundle_version_conflicts_total",
    help: "Bundles refused because their policyId@version was served with another bundle_hash (a version is immutable)",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(bundles().conflicts);
    },
  });
  new Gauge({
    name: "writ_bundle_source_serial",
    aggregator: "min",
    help: "Serial of the remote bundle source's set served (absent without a remote source)",
    registers: [registry],
    collect() {
      const serial = bundles().remote?.serial;
      if (serial !== undefined && serial !== null) this.set(serial);
    },
  });
  new Gauge({
    name: "writ_bundle_source_failures",
    aggregator: "max",
    help: "Polls of the remote bundle source failed in a row",
    registers: [registry],
    collect() {
      const remote = bundles().remote;
      if (remote) this.set(remote.failures);
    },
  });
  const loads = [
    [
      "writ_bundle_loads_total",
      "Loads of a policy bundle (read and verified), by outcome: loaded, not_found, refused, timeout, abandoned",
      (total) => total.count,
    ],
    [
      "writ_bundle_load_seconds_total",
      "Time spent loading policy bundles, by outcome (divided by writ_bundle_loads_total: the mean load time)",
      (total) => total.seconds,
    ],
  ] as const satisfies readonly (readonly [string, string, (total: BundleLoadTotal) => number])[];
  for (const [name, help, value] of loads) {
    new Counter({
      name,
      help,
      labelNames: ["outcome"] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [outcome, total] of sources.bundles.registry.loads.totals()) this.inc({ outcome }, value(total));
      },
    });
  }
  registerSeries(registry, sources.storeSeries);
  if (sources.signingPool !== null) signingPoolMetrics(registry, sources.signingPool);
  new Gauge({
    name: "writ_audit_healthy",
    aggregator: "min",
    help: "1 while the audit trail takes writes (audit_db of /health), 0 when it is off or failing",
    registers: [registry],
    collect() {
      this.set(sources.audit.healthy() ? 1 : 0);
    },
  });
}

/** Series declared as data (observability/series.ts): a gauge each, a counter for a name ending in `_total`. */
function registerSeries(registry: Registry, series: readonly ScrapedSeries[]): void {
  for (const [name, help, read] of series) {
    if (name.endsWith("_total")) {
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          const now = read();
          if (now === null) return;
          this.reset();
          this.inc(now);
        },
      });
    } else {
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          const now = read();
          if (now !== null) this.set(now);
        },
      });
    }
  }
}

/** The signing threads (SERVICE_SIGNING_THREADS, signing/pool.ts): registered only when they sign. */
function signingPoolMetrics(registry: Registry, pool: SigningPool): void {
  registerSeries(
    registry,
    snapshotSeries(
      () => pool.stats(),
      [
        ["writ_signing_threads", "Threads configured to sign and self-verify (SERVICE_SIGNING_THREADS)", (s) => s.threads],
        ["writ_signing_threads_running", "Signing threads running now: fewer while a stopped one is being replaced", (s) => s.running],
        [
          "writ_signing_queue",
          "Signatures asked for and not yet answered: collected in this turn of the event loop, or on a thread",
          (s) => s.queued + s.signing,
        ],
        [
          "writ_signing_threads_replaced_total",
          "Signing threads that stopped (a crash, an exit) and were replaced; the requests each held were answered 503",
          (s) => s.replaced,
        ],
      ],
    ),
  );
  const batches = new Histogram({
    name: "writ_signing_batch_duration_seconds",
    help: "Time from posting a batch of signatures to a signing thread to its answer (signed and self-verified)",
    buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1],
    registers: [registry],
  });
  const sizes = new Histogram({
    name: "writ_signing_batch_requests",
    help: "Signatures per batch posted to a signing thread (the requests of one turn of the event loop, shared out)",
    buckets: [1, 2, 4, 8, 16, 32, 64, 128],
    registers: [registry],
  });
  pool.observeBatches((seconds, requests) => {
    batches.observe(seconds);
    sizes.observe(requests);
  });
}
