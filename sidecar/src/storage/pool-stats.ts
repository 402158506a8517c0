/**
 * What a database connection pool says of itself at a scrape (`writ_postgres_pool_*` in `/metrics`, docs/sidecar.md
 * "Metrics"). Counts of the pool alone: the sidecar's own connection (postgres/instance-session.ts) is not in it.
 */
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
