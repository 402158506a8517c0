/**
 * The connection pool of a sidecar on PostgreSQL, sized and bounded from the configuration (docs/fleet.md, "Sizing"):
 * `max` connections, a connect timeout, and a statement timeout set on every connection by the server
 * (`statement_timeout`) and watched by the client (`query_timeout`, a little longer, for a server that stops answering).
 * TLS settings are passed through in the URL (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`), as libpq reads them.
 */
import pg from "pg";
import type { DatabaseConfig } from "../../config.js";

/** The client gives up this long after the server's own statement timeout would have fired. */
const CLIENT_TIMEOUT_MARGIN_MS = 1_000;

export function createPool(database: DatabaseConfig, onIdleError: (error: Error) => void): pg.Pool {
  const pool = new pg.Pool({
    connectionString: database.url,
    max: database.poolSize,
    connectionTimeoutMillis: database.connectTimeoutMs,
    statement_timeout: database.statementTimeoutMs,
    query_timeout: database.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
    idleTimeoutMillis: 30_000,
    // TCP keepalive: a connection a network device dropped silently is found dead and replaced, not waited on.
    keepAlive: true,
    application_name: "writ-sidecar",
  });
  // An idle client's error (the server restarting, a proxy cutting the connection) is emitted on the pool: without a
  // listener it would be an uncaught exception. The client is discarded; the next query connects again.
  pool.on("error", onIdleError);
  return pool;
}

/** The URL without its password, for logs and errors: credentials are never printed. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable URL)";
  }
}
