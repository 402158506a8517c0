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

/** Whether the sidecar can decide: a bundle is served and the store does not fail writes (the header). */
export function isReady(bundles: Pick<BundlesHealth, "ready">, store: Pick<StoreStatus, "status">): boolean {
  return bundles.ready && store.status !== "error";
}
