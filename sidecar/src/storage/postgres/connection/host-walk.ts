/**
 * How every connection to the fleet's database is made, the pool's and the sidecar's own (docs/fleet.md, "Failover"):
 * with libpq's semantics of a URL of several hosts and `target_session_attrs`, which node-postgres lacks. Each new
 * connection tries the hosts in the URL's order and is made to the first that is up and has the session attribute asked
 * for; none qualifying fails the connection as an unreachable database does (503, readiness failed). After a failover,
 * the next connection finds the promoted server by itself. A URL of one host with no attribute makes no walk.
 *
 * How a walk works with node-postgres's clients, and its cost: docs/storage-engines.md, "What the PostgreSQL engine
 * relies on in node-postgres". TIME: each host, try and session attribute included, gets the connect timeout, so a host
 * that swallows packets delays the next one, never stops it from being tried. A client whose socket is destroyed while
 * it walks (the pool's connect timeout, a probe abandoned) stops walking and fails.
 */
import pg from "pg";
import { DEFAULT_PORT, hostLabel, parseDatabaseUrl, type DatabaseHost, type DatabaseTargets } from "./hosts.js";

/** How the clients of one database URL are made. */
export interface Connector {
  /** The class of every client: node-postgres's own for one host and no session attribute. */
  readonly Client: typeof pg.Client;
  /** The connection string clients are built with: the URL, or with several hosts the first host's URL. */
  readonly connectionString: string;
  /** The longest the walk takes before the chosen host's connection is made: 0 without a walk (the header's TIME). */
  readonly walkMs: number;
}

/** The clients of `url`, each host given `connectTimeoutMs` (a URL `parseDatabaseUrl` accepts: config.ts checked it). */
export function connector(url: string, connectTimeoutMs: number): Connector {
  const targets = parseDatabaseUrl(url);
  if (targets.hosts.length === 1 && targets.targetSessionAttrs === "any") {
    return { Client: pg.Client, connectionString: url, walkMs: 0 };
  }
  return {
    Client: walkingClient(targets, connectTimeoutMs),
    connectionString: targets.hosts[0]!.url,
    walkMs: targets.hosts.length * connectTimeoutMs,
  };
}

/** The statement whose one value says whether a session qualifies, per attribute. */
const CHECKS = {
  "read-write": { sql: "SHOW transaction_read_only", qualifies: (value: unknown) => value === "off", not: "read-only" },
  primary: { sql: "SELECT pg_is_in_recovery() AS in_recovery", qualifies: (value: unknown) => value === false, not: "in recovery" },
} as const;

function walkingClient(targets: DatabaseTargets, perHostMs: number): typeof pg.Client {
  return class WalkingClient extends pg.Client {
    /** What each try is built with: this client's own settings, another host's URL. */
    readonly #config: pg.ClientConfig;

    constructor(config?: pg.ClientConfig) {
      // The chosen host's connection gets one host's time; the pool's own timeout covers the whole walk.
      super({ ...config, connectionTimeoutMillis: perHostMs });
      this.#config = config ?? {};
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
      const connected = this.#walk().then((host) => {
        // What node-postgres connects to, and checks a TLS certificate against.
        this.host = host.host;
        this.port = host.port ?? DEFAULT_PORT;
        return super.connect();
      });
      if (callback === undefined) return connected;
      const answer = callback as (err: Error | null, c?: pg.Client) => void;
      connected.then(
        (client) => answer(null, client),
        (error: unknown) => answer(error instanceof Error ? error : new Error(String(error))),
      );
    }

    /** The first host that qualifies; throws, naming each host and why it did not, when none does. */
    async #walk(): Promise<DatabaseHost> {
      const stream = this.connection.stream;
      const stop = new AbortController();
      const onClose = (): void => stop.abort();
      stream.once("close", onClose);
      const refused: string[] = [];
      try {
        for (const host of targets.hosts) {
          const why = await tryHost(host, this.#config, targets, perHostMs, stop.signal);
          if (stop.signal.aborted || stream.destroyed) throw new Error("the connection was closed while its host was being chosen");
          if (why === null) return host;
          refused.push(`${hostLabel(host)} ${why}`);
        }
      } finally {
        stream.removeListener("close", onClose);
      }
      const wanted = targets.targetSessionAttrs === "any" ? "could be connected to" : `accepts ${targets.targetSessionAttrs} sessions`;
      throw new Error(`no host of the database URL ${wanted}: ${refused.join("; ")}`);
    }
  };
}

/** Null when `host` qualifies; else why not, for the error. Never throws; the try's connection is closed either way. */
async function tryHost(
  host: DatabaseHost,
  config: pg.ClientConfig,
  targets: DatabaseTargets,
  perHostMs: number,
  stop: AbortSignal,
): Promise<string | null> {
  // Bounded by `perHostMs` below, its check included; not by a timer of its own.
  const client = new pg.Client({ ...config, connectionString: host.url, connectionTimeoutMillis: 0 });
  // A try's connection lost after it answered is of no consequence; unhandled, its `error` would end the process.
  client.on("error", () => undefined);
  let timer: NodeJS.Timeout | undefined;
  let onStop: (() => void) | undefined;
  const cut = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`did not answer within ${perHostMs} ms`), perHostMs);
    onStop = () => resolve("was abandoned");
    stop.addEventListener("abort", onStop, { once: true });
  });
  const tried = (async (): Promise<string | null> => {
    try {
      await client.connect();
      if (targets.targetSessionAttrs === "any") return null;
      const check = CHECKS[targets.targetSessionAttrs];
      const { rows } = await client.query<Record<string, unknown>>(check.sql);
      const value = Object.values(rows[0] ?? {})[0];
      return check.qualifies(value) ? null : `is ${check.not}`;
    } catch (error) {
      return `failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  })();
  let answered = false;
  try {
    return await Promise.race([tried.finally(() => (answered = true)), cut]);
  } finally {
    clearTimeout(timer);
    stop.removeEventListener("abort", onStop!);
    // A host that answered is told goodbye; one that did not gets its socket destroyed (`end` would wait for it).
    if (answered) void client.end().catch(() => undefined);
    else client.connection.stream.destroy();
  }
}
