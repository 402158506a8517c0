/**
 * Prometheus metrics (prom-client), served on `GET /metrics` behind the Bearer key like every Surface A route but
 * `/health`. Labels use the route pattern, never the raw URL, so an attacker cannot mint label values.
 */
import type { FastifyInstance } from "fastify";
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export interface Metrics {
  readonly registry: Registry;
  readonly decisions: Counter<"status" | "endpoint">;
  /** Counts and times every answered request. */
  instrument(app: FastifyInstance, surface: "a" | "b"): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "writ_" });
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
