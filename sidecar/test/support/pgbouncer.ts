/**
 * A PgBouncer of a test's own in front of a PostgreSQL server: its own ini, log and pid file in a temporary directory,
 * 127.0.0.1 on the port given (never a system PgBouncer's 6432), every database of the server reachable through it
 * under its own name, trust auth for the users of an auth file (`postgres`), `pool_mode` session or transaction.
 * Stopped and removed by `remove()`.
 *
 * Tests run as root on the project's machines, and PgBouncer refuses to run as root: it runs as the `postgres` user
 * (`runuser`), as the private servers of private-postgres.ts do. Without the binary, `pgbouncerUnavailable()` says why:
 * the tests skip with that line locally and fail with CI=true (.ci/run installs Debian's package).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chown, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { DEFAULT_DATABASE } from "../../src/storage/postgres/config.js";

const run = promisify(execFile);
const BINARY = "/usr/sbin/pgbouncer";

export type PoolMode = "session" | "transaction";

/** The startup parameters writ's connections send besides those PgBouncer knows (postgres/connection/pool.ts). */
export const WRIT_STARTUP_PARAMETERS = ["statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout", "options"] as const;

export interface PgBouncerOptions {
  /** The server behind it. */
  readonly server: { readonly host: string; readonly port: number };
  readonly port: number;
  readonly poolMode: PoolMode;
  /** Startup parameters PgBouncer accepts from clients and drops (`ignore_startup_parameters`); none by default. */
  readonly ignoreStartupParameters?: readonly string[];
}

export interface PgBouncer {
  readonly port: number;
  /** `url` (a URL of the server) with its host and port replaced by this PgBouncer's. */
  urlOf(url: string): string;
  /** `RECONNECT` in its console: server connections are closed once released, and opened anew with the role's settings. */
  reconnect(): Promise<void>;
  /** Its log so far. */
  log(): Promise<string>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

/**
 * Sets for the role and database of `pool` the settings writ's connections ask for by default, which PgBouncer drops
 * (WRIT_STARTUP_PARAMETERS): what the start's check of the sessions asks an operator to do (session-check.ts). Server
 * connections opened before keep what they started with (`reconnect`).
 */
export async function setWritSettings(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ role: string; database: string }>(
    "SELECT quote_ident(current_user) AS role, quote_ident(current_database()) AS database",
  );
  const { role, database } = rows[0]!;
  const settings = {
    statement_timeout: `${DEFAULT_DATABASE.statementTimeoutMs}ms`,
    lock_timeout: `${DEFAULT_DATABASE.lockTimeoutMs}ms`,
    idle_in_transaction_session_timeout: `${DEFAULT_DATABASE.idleInTransactionTimeoutMs}ms`,
    jit: "off",
  };
  for (const [name, value] of Object.entries(settings))
    await pool.query(`ALTER ROLE ${role} IN DATABASE ${database} SET ${name} = '${value}'`);
}

/** Why PgBouncer cannot be started here, or null. With CI=true, throws instead. */
export function pgbouncerUnavailable(): string | null {
  if (existsSync(BINARY)) return null;
  const why = `no ${BINARY}`;
  if (process.env["CI"] === "true") throw new Error(`${why}: CI runs these tests through PgBouncer (apt package pgbouncer)`);
  return `${why}: install Debian's pgbouncer package to run these tests`;
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const dir = await mkdtemp(join(tmpdir(), "writ-pgbouncer-"));
  const asRoot = userInfo().uid === 0;
  const pidFile = join(dir, "pgbouncer.pid");
  const ini = join(dir, "pgbouncer.ini");
  const ignored = options.ignoreStartupParameters ?? [];
  await writeFile(join(dir, "userlist.txt"), '"postgres" ""\n');
  await writeFile(
    ini,
    [
      "[databases]",
      `* = host=${options.server.host} port=${options.server.port}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${options.port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "userlist.txt")}`,
      `pool_mode = ${options.poolMode}`,
      "max_client_conn = 500",
      // Session mode needs a server connection per client: two sidecars' pools and own sessions.
      "default_pool_size = 40",
      `logfile = ${join(dir, "pgbouncer.log")}`,
      `pidfile = ${pidFile}`,
      "admin_users = postgres",
      ...(ignored.length === 0 ? [] : [`ignore_startup_parameters = ${ignored.join(",")}`]),
      "",
    ].join("\n"),
  );
  if (asRoot) {
    const uid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
    const gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
    for (const file of [dir, ini, join(dir, "userlist.txt")]) await chown(file, uid, gid);
  }
  // -d: it forks once listening, and its pid file names the daemon.
  await (asRoot ? run("runuser", ["-u", "postgres", "--", BINARY, "-d", ini]) : run(BINARY, ["-d", ini]));
  const bouncer: PgBouncer = {
    port: options.port,
    urlOf(url) {
      const parsed = new URL(url);
      parsed.hostname = "127.0.0.1";
      parsed.port = String(options.port);
      return parsed.toString();
    },
    async reconnect() {
      const console = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:${options.port}/pgbouncer` });
      await console.connect();
      try {
        await console.query("RECONNECT");
      } finally {
        await console.end();
      }
    },
    log: () => readFile(join(dir, "pgbouncer.log"), "utf8").catch(() => ""),
    async remove() {
      const pid = Number((await readFile(pidFile, "utf8").catch(() => "")).trim());
      if (pid > 0) {
        try {
          process.kill(pid, "SIGINT");
        } catch {
          // Gone already.
        }
        await gone(pid);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await listening(options.port);
  } catch (error) {
    const log = await bouncer.log();
    await bouncer.remove();
    throw new Error(`PgBouncer did not listen on ${options.port}: ${(error as Error).message}\n${log}`, { cause: error });
  }
  return bouncer;
}

/** Resolves once 127.0.0.1:`port` accepts a connection, for at most 10 s. */
async function listening(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error("not listening within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves once process `pid` is gone, for at most 10 s (then it is killed). */
async function gone(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > deadline) {
      process.kill(pid, "SIGKILL");
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
