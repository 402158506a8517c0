/**
 * Readiness (`GET /health?probe=ready`, docs/bundles.md "Readiness"): whether a load balancer should send this sidecar
 * requests. It is ready while it can decide: a policy bundle is served (`bundles.ready`) AND the store takes writes
 * (`store.status` is not `error`: the replay store, and the audit records a signed decision is written with, on LMDB
 * or PostgreSQL). A store that is `none` (no durable store: the development memory store, or
 * `SERVICE_REPLAY_STORE=none`) is a configuration, not a failure: it does not make the sidecar unready.
 * Liveness (`GET /health`) never depends on it.
 *
 * INVARIANT (not ready says why): when `ready` is false, the body shows each component that made it so: `bundles.ready`
 * false with `bundles.problem`, and/or `store.status` `error` with `store.problem` and `since`.
 */
import type { BundlesHealth, StoreStatus } from "@writ/wire";

/** A component readiness depends on. */
export type ReadinessComponent = "bundles" | "store";

export interface Readiness {
  readonly ready: boolean;
  /** The components that are not ready, in this order; empty when ready. */
  readonly notReady: readonly ReadinessComponent[];
}

export function readiness(bundles: Pick<BundlesHealth, "ready">, store: Pick<StoreStatus, "status">): Readiness {
  const notReady: ReadinessComponent[] = [];
  if (!bundles.ready) notReady.push("bundles");
  if (store.status === "error") notReady.push("store");
  return { ready: notReady.length === 0, notReady };
}
