/**
 * What a database connection pool says of itself at a scrape (`writ_postgres_pool_*` in `/metrics`, docs/sidecar.md
 * "Metrics"). Counts of the pool alone: the sidecar's own connection (instance-session.ts) is not in it.
 */
import { snapshotSeries, type ScrapedSeries } from "../../../observability/series.js";

export interface PoolStats {
  /** Connections open now, idle or checked out (at most SERVICE_DATABASE_POOL_SIZE). */
  readonly total: number;
  /** Of those, connections idle in the pool. */
  readonly idle: number;
  /** Statements waiting for a connection: every connection is checked out. */
  readonly waiting: number;
  /**
   * Connections that failed since start, each once: an attempt refused or timed out, or an open connection that broke
   * (lost, cut by a proxy, terminated by the server). Only grows.
   */
  readonly errors: number;
}

/** Which pool a family of `writ_postgres_*pool_*` series counts: their name's prefix, and the pool's words in their HELP. */
interface PoolNaming {
  readonly prefix: string;
  readonly pool: string;
  readonly size: string;
}

export const PRIMARY_POOL: PoolNaming = { prefix: "writ_postgres_pool", pool: "PostgreSQL pool", size: "SERVICE_DATABASE_POOL_SIZE" };
/** The read database's pool (SERVICE_DATABASE_READ_URL, read-pool.ts): its own series, beside the primary's. */
export const READ_POOL: PoolNaming = {
  prefix: "writ_postgres_read_pool",
  pool: "pool of the read database (SERVICE_DATABASE_READ_URL)",
  size: "a quarter of SERVICE_DATABASE_POOL_SIZE",
};

/** A pool's series of `/metrics`, read from `stats()` at each scrape. */
export function poolSeries({ prefix, pool, size }: PoolNaming, stats: () => PoolStats | null): ScrapedSeries[] {
  return snapshotSeries(stats, [
    [`${prefix}_connections`, `Connections the ${pool} holds now, idle or in use (at most ${size})`, (s) => s.total],
    [`${prefix}_idle_connections`, "Of those, connections idle in the pool", (s) => s.idle],
    [`${prefix}_waiting_clients`, "Statements queued for a connection of the pool because every connection is in use", (s) => s.waiting],
    [
      `${prefix}_errors_total`,
      `Connections of the ${pool} that failed, each once: an attempt refused or timed out, or an open connection lost, cut or terminated by the server`,
      (s) => s.errors,
    ],
  ]);
}
