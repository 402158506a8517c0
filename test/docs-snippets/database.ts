/**
 * The fleet's database on the test's PostgreSQL (test/support/postgres.ts: 127.0.0.1:5432, trust auth, user postgres
 * unless WRIT_TEST_POSTGRES_URL says otherwise): a unique name, created by the doc's own `createdb`, dropped after.
 */
import { randomBytes } from "node:crypto";
import { ADMIN_URL, dropDatabase } from "../support/postgres.js";

export interface FleetDatabase {
  readonly name: string;
  /** The URL the sidecars read from SERVICE_DATABASE_URL_FILE. */
  readonly url: string;
  /** libpq's variables, which `createdb` reads for the server and the user. */
  readonly env: Record<string, string>;
  /** Drops it if it exists (its sidecars stopped first). */
  drop(): Promise<void>;
}

export function fleetDatabase(): FleetDatabase {
  const name = `writ_docs_${randomBytes(6).toString("hex")}`;
  const admin = new URL(ADMIN_URL);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    env: { PGHOST: admin.hostname, PGPORT: admin.port || "5432", PGUSER: decodeURIComponent(admin.username) || "postgres" },
    // A sidecar's backends may still be closing: up to 10 s.
    drop: () => dropDatabase(name, 100),
  };
}
