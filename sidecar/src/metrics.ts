/**
 * Prometheus metrics (prom-client), served on `GET /metrics` behind the Bearer key like every Surface A route but
 * `/health`. Labels use the route pattern, never the raw URL, so an attacker cannot mint label values.
 */
import type { FastifyInstance } from "fastify";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { BundlesHealth } from "@writ/wire";

export interface Metrics {
  readonly registry: Registry;
  readonly decisions: Counter<"status" | "endpoint">;
  /** Counts and times every answered request. */
  instrument(app: FastifyInstance, surface: "a" | "b"): void;
}

/** What the bundle metrics read at each scrape: the `bundles` of `/health` (docs/bundles.md, "Metrics"). */
export type BundleGauges = () => BundlesHealth;

export function createMetrics(bundles?: BundleGauges): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "writ_" });
  if (bundles) bundleMetrics(registry, bundles);
  const duration = new Histogram({
    name: "writ_http_request_duration_seconds",
    help: "Time from request received to response sent, by surface, method, route pattern and status",
    labelNames: ["surface", "method", "route", "status"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const decisions = new Counter({
    name: "writ_decisions_total",
    help: "Signed decisions, by response status and endpoint",
    labelNames: ["status", "endpoint"] as const,
    registers: [registry],
  });
  return {
    registry,
    decisions,
    instrument(app, surface) {
      app.addHook("onResponse", async (request, reply) => {
        duration.observe(
          { surface, method: request.method, route: request.routeOptions.url ?? "(no route)", status: String(reply.statusCode) },
          reply.elapsedTime / 1000,
        );
      });
    },
  };
}

/** Read at each scrape, so they cost nothing between scrapes. */
function bundleMetrics(registry: Registry, bundles: BundleGauges): void {
  new Gauge({
    name: "writ_bundles_ready",
    help: "1 while a policy bundle is served (readiness), 0 otherwise",
    registers: [registry],
    collect() {
      this.set(bundles().ready ? 1 : 0);
    },
  });
  new Gauge({
    name: "writ_bundles_served",
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
    help: "Serial of the remote bundle source's set served (absent without a remote source)",
    registers: [registry],
    collect() {
      const serial = bundles().remote?.serial;
      if (serial !== undefined && serial !== null) this.set(serial);
    },
  });
  new Gauge({
    name: "writ_bundle_source_failures",
    help: "Polls of the remote bundle source failed in a row",
    registers: [registry],
    collect() {
      const remote = bundles().remote;
      if (remote) this.set(remote.failures);
    },
  });
}
