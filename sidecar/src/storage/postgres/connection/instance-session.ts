/**
 * The sidecar's own connection to the fleet's database, one client beside the pool for the sidecar's life, with two jobs
 * (docs/fleet.md, "The sidecar's own connection", with the why of each choice). THE INSTANCE LOCK. With a record log, the session holds the advisory lock of the log's id (`instanceLockKey`), taken
 *   with `pg_try_advisory_xact_lock` (asked again for START_LOCK_WAIT_MS): a second live sidecar with the same instance id
 *   is refused at start (InstanceInUseError). The lock belongs to a transaction kept open for the session's life (so it
 *   stays on one server connection through PgBouncer in transaction mode), reading no table and holding no snapshot,
 *   exempt from the idle-in-transaction limit (NO_IDLE_LIMIT); it ends with the connection (KEEPALIVE finds a host gone).
 * - THE PROBE (`probe()`, every DATABASE_PROBE_INTERVAL_MS): `SELECT 1`, reconnecting (and locking) first if the session
 *   was lost; `store` of `/health` and readiness follow it, failed past PROBE_DEADLINE_MS. Outside the pool, a probe
 *   never waits behind requests: a busy pool is not a failing database. INVARIANT (one probe at a time): a black hole
 *   holds one probe and one socket; one unanswered past the pool's client timeout destroys its socket.
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { StoreUnavailableError } from "@writ/runtime";
import type pg from "pg";
import type { DatabaseConfig } from "../config.js";
import type { StoreHealth } from "../../backend.js";
import { InstanceInUseError } from "../../instance-in-use.js";
import { connector } from "./host-walk.js";
import { CLIENT_TIMEOUT_MARGIN_MS } from "./pool.js";

/** How often the session is probed: with PROBE_DEADLINE_MS, an unreachable database shows within 1 s. */
export const DATABASE_PROBE_INTERVAL_MS = 500;
/** A probe that has not answered this long after it started fails the store (the answer may still come). */
export const PROBE_DEADLINE_MS = 300;
/** How long a start waits for the instance lock before it refuses to start (`#lockWithin`), and how often it asks. */
export const START_LOCK_WAIT_MS = 3_000;
const START_LOCK_RETRY_MS = 100;
/** How long closing waits for the server to end the session before its socket is destroyed. */
const CLOSE_WAIT_MS = 1_000;
/** The lock key's namespace: no other lock of writ is keyed from a name that starts so. */
const LOCK_NAMESPACE = "writ.instance:";
/**
 * The server's side of the session's TCP connection: a client host that vanished is found dead within about 30 s
 * (idle 10 s, then 4 probes 5 s apart; 30 s for unacknowledged data), and its lock released. Set only where the
 * server has the setting, and inside the session's transaction (through PgBouncer, it never reaches another client).
 */
const KEEPALIVE: readonly (readonly [string, string])[] = [
  ["tcp_keepalives_idle", "10"],
  ["tcp_keepalives_interval", "5"],
  ["tcp_keepalives_count", "4"],
  ["tcp_user_timeout", "30000"],
];
const KEEPALIVE_SQL = `SELECT set_config(name, setting, false) FROM (VALUES ${KEEPALIVE.map(([name, setting]) => `('${name}', '${setting}')`).join(", ")}) AS s (name, setting)
  WHERE current_setting(name, true) IS NOT NULL`;
/**
 * The session's transaction has no idle-in-transaction limit, whatever the server's, the database's or the role's
 * default. The limit guards against a transaction left holding row locks or a snapshot; this one holds neither (the
 * header), so it would guard nothing, and would end the instance lock whenever the sidecar's event loop is held longer
 * than it between two probes, opening the log to a second sidecar. A lost connection is found by KEEPALIVE instead.
 * Set inside the transaction (`SET LOCAL`), like KEEPALIVE: through PgBouncer it stays on this transaction's server
 * connection.
 */
const NO_IDLE_LIMIT = "SET LOCAL idle_in_transaction_session_timeout = 0";
/** Who holds an advisory lock (a bigint key is `classid` high 32 bits, `objid` low 32 bits, `objsubid` 1). */
const HOLDER_SQL = `SELECT a.pid, a.application_name, host(a.client_addr) AS client, a.backend_start
  FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid = $1::oid AND l.objid = $2::oid
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  LIMIT 1`;

const HEALTHY: StoreHealth = { ok: true, problem: null, since: null };

/** The advisory lock key of instance `logId`: 64 bits of SHA-256 of its name, as the decimal text of a signed bigint. */
export function instanceLockKey(logId: string): string {
  return createHash("sha256").update(`${LOCK_NAMESPACE}${logId}`).digest().readBigInt64BE(0).toString();
}

export interface InstanceSessionOptions {
  readonly database: DatabaseConfig;
  /** The instance whose lock the session holds, and where its id came from; null: no record log, no lock. */
  readonly instance: { readonly id: string; readonly source: string } | null;
  /** Told of each change of health, with the error that failed it. */
  readonly onHealth?: (health: StoreHealth, error?: unknown) => void;
}

export class InstanceSession {
  readonly #config: pg.ClientConfig;
  /** Connects to the URL's host, or the first of its hosts that qualifies (host-walk.ts). */
  readonly #Client: typeof pg.Client;
  readonly #instance: InstanceSessionOptions["instance"];
  readonly #onHealth: (health: StoreHealth, error?: unknown) => void;
  readonly #abandonMs: number;
  /** The session's client, connecting or connected; null once lost or dropped (the next probe connects anew). */
  #client: pg.Client | null = null;
  /** Whether the session's transaction holds the instance lock. */
  #locked = false;
  #probing = false;
  #closed = false;
  #health: StoreHealth = HEALTHY;

  /**
   * Connects the session and takes the instance lock.
   * @throws InstanceInUseError when another session holds the lock; the connection's error when it fails
   */
  static async open(options: InstanceSessionOptions): Promise<InstanceSession> {
    const session = new InstanceSession(options);
    try {
      const client = await session.#connect();
      if (!(await session.#lockWithin(client, START_LOCK_WAIT_MS))) throw await session.#inUse(client);
    } catch (error) {
      await session.close();
      throw error;
    }
    return session;
  }

  private constructor(options: InstanceSessionOptions) {
    const { database } = options;
    const { Client, connectionString, walkMs } = connector(database.url, database.connectTimeoutMs);
    this.#Client = Client;
    this.#config = {
      connectionString,
      connectionTimeoutMillis: database.connectTimeoutMs,
      statement_timeout: database.statementTimeoutMs,
      lock_timeout: database.lockTimeoutMs,
      keepAlive: true,
      // Names the process in pg_stat_activity, and in the refusal of a second sidecar with the same instance id.
      application_name: `writ-sidecar@${hostname()}:${process.pid}`.slice(0, 63),
    };
    this.#instance = options.instance;
    this.#onHealth = options.onHealth ?? (() => undefined);
    // A probe that must first choose its host (host-walk.ts) has that much longer.
    this.#abandonMs = walkMs + database.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS;
  }

  /** Whether the database answers the session: `store` of `/health`. */
  health(): StoreHealth {
    return this.#health;
  }

  /** One probe, unless one is under way (the header's INVARIANT). Never throws. */
  probe(): void {
    if (this.#closed || this.#probing) return;
    this.#probing = true;
    let settled = false;
    let late = false;
    // Judged after the I/O of the loop turn the deadline fires in: an answer that arrived while the event loop was
    // held (a long task of the sidecar's own) is not taken for a late database. The deadline fails a healthy store; a
    // store already failing keeps its cause (the last failure's) until this probe settles, and a late answer is then
    // the cause.
    const deadline = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          late = true;
          if (this.#health.ok) this.#fail(noAnswer());
        }),
      PROBE_DEADLINE_MS,
    ).unref();
    const abandon = setTimeout(() => this.#drop(), this.#abandonMs).unref();
    void this.#check()
      .then(
        () => {
          if (late) this.#fail(noAnswer());
          else this.#set(HEALTHY);
        },
        (error: unknown) => {
          // A lock another session holds keeps the session: the next probe asks for the lock again, not for a connection.
          if (!(error instanceof InstanceInUseError)) this.#drop();
          this.#fail(error);
        },
      )
      .finally(() => {
        settled = true;
        clearTimeout(deadline);
        clearTimeout(abandon);
        this.#probing = false;
      });
  }

  /** Ends the session (its transaction, and the lock with it); a server that does not answer gets its socket destroyed. */
  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = null;
    if (client === null) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      (async () => {
        await client.query("ROLLBACK").catch(() => undefined);
        await client.end().catch(() => undefined);
      })(),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS))),
    ]);
    clearTimeout(timer);
    destroy(client);
  }

  /** `SELECT 1` on the session, connected (and the lock taken) first when it is not. */
  async #check(): Promise<void> {
    const client = this.#client ?? (await this.#connect());
    if (!this.#locked && !(await this.#lock(client))) {
      throw new InstanceInUseError(this.#instance!.id, "another database session holds its lock", this.#remedy());
    }
    await client.query("SELECT 1");
  }

  /** A new session: connected, in its transaction, with no idle limit and with its keepalive. */
  async #connect(): Promise<pg.Client> {
    const client = new this.#Client(this.#config);
    // Kept for the client's life: a lost connection emits `error` (unhandled, it would end the process). The session is
    // then gone, with its lock; a probe connects anew at once (a database shutting down terminates its sessions first,
    // and then refuses connections: it shows as failing within milliseconds, not at the next probe).
    client.on("error", () => {
      if (this.#client !== client) return;
      this.#client = null;
      this.#locked = false;
      setImmediate(() => this.probe());
    });
    this.#client = client;
    this.#locked = false;
    await client.connect();
    await client.query("BEGIN");
    await client.query(NO_IDLE_LIMIT);
    await client.query(KEEPALIVE_SQL);
    return client;
  }

  /**
   * At start: the instance lock, asked for again until `ms` have passed. The session of a sidecar that was just killed
   * ends only once the server has read the end of its connection, a moment after the kill: a restart does not lose
   * that race.
   */
  async #lockWithin(client: pg.Client, ms: number): Promise<boolean> {
    const until = Date.now() + ms;
    while (!(await this.#lock(client))) {
      if (Date.now() >= until) return false;
      await sleep(START_LOCK_RETRY_MS);
    }
    return true;
  }

  /** Takes the instance lock in the session's transaction; true without an instance (nothing to lock). */
  async #lock(client: pg.Client): Promise<boolean> {
    if (this.#instance === null) return true;
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1::bigint) AS locked", [
      instanceLockKey(this.#instance.id),
    ]);
    this.#locked = rows[0]?.locked === true;
    return this.#locked;
  }

  /** The refusal of a start: who holds the lock, as far as this role may see. */
  async #inUse(client: pg.Client): Promise<InstanceInUseError> {
    const instance = this.#instance!;
    const key = BigInt.asUintN(64, BigInt(instanceLockKey(instance.id)));
    let owner = "a session of the database holds its lock";
    try {
      await client.query("ROLLBACK");
      const { rows } = await client.query<{ pid: number; application_name: string; client: string | null; backend_start: Date | null }>(
        HOLDER_SQL,
        [String(key >> 32n), String(key & 0xffffffffn)],
      );
      const row = rows[0];
      if (row !== undefined) {
        const who = [row.application_name === "" ? null : row.application_name, row.client === null ? null : `from ${row.client}`]
          .filter((part) => part !== null)
          .join(" ");
        owner = `database session ${row.pid}${who === "" ? "" : ` (${who})`}${row.backend_start === null ? "" : `, connected since ${row.backend_start.toISOString()}`}, holds its lock`;
      }
    } catch {
      // The refusal stands without its details.
    }
    return new InstanceInUseError(
      instance.id,
      owner,
      `${this.#remedy()}; a sidecar whose host vanished holds it until the database finds the connection dead (about 30 s)`,
    );
  }

  #remedy(): string {
    return `give each sidecar its own SERVICE_INSTANCE_ID (this one's instance id is from ${this.#instance!.source})`;
  }

  /** Forgets the session and destroys its socket, whatever it was doing. */
  #drop(): void {
    const client = this.#client;
    this.#client = null;
    this.#locked = false;
    if (client !== null) destroy(client);
  }

  #fail(error: unknown): void {
    if (this.#closed) return;
    const problem = error instanceof Error ? error.message : String(error);
    this.#set({ ok: false, problem, since: this.#health.since ?? new Date().toISOString() }, error);
  }

  /** A change of `ok` is told; while failing, the problem is the latest failure's. */
  #set(next: StoreHealth, error?: unknown): void {
    if (this.#closed) return;
    const changed = next.ok !== this.#health.ok;
    this.#health = next;
    if (changed) this.#onHealth(next, error);
  }
}

/** A probe's failure when it answered late, or not yet, PROBE_DEADLINE_MS after it started. */
function noAnswer(): StoreUnavailableError {
  return new StoreUnavailableError(`probing the database failed: no answer within ${PROBE_DEADLINE_MS} ms`);
}

/**
 * Destroys the client's socket at once (as pg-pool does on a connection timeout): `end()` would wait for a server that
 * may never answer. The client then emits `error`, which its listener (#connect) ignores.
 */
function destroy(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
