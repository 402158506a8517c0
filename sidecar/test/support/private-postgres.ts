/**
 * A PostgreSQL server of a test's own, for tests that restart or stop the database (the machine's shared server is used
 * by other test files at the same time and must never be restarted by one). `initdb` into a temporary directory, trust
 * auth, 127.0.0.1 on a free port, a private socket directory; removed by `remove()`.
 *
 * Tests run as root on the project's machines, and PostgreSQL refuses to run as root: the server and its tools run as
 * the `postgres` user (`runuser`). Without the binaries, `privatePostgresUnavailable()` says why: the tests skip with that
 * line locally and fail with CI=true.
 *
 * `startStandby` adds a hot standby of such a server (`pg_basebackup -R`, streaming replication) on another port, for
 * failover and read-replica tests; `synchronous: true` makes the primary wait for it at every commit.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

function binDir(): string | null {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return null;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(base, versions[0], "bin");
}

/** Why a private server cannot be started here, or null. With CI=true, throws instead. */
export function privatePostgresUnavailable(): string | null {
  const why = binDir() === null ? "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin" : null;
  if (why !== null && process.env["CI"] === "true")
    throw new Error(`${why}: CI runs these tests against a private server (apt package postgresql)`);
  return why === null ? null : `${why}: install Debian's postgresql package to run these tests`;
}

export interface PrivatePostgres {
  readonly port: number;
  /** `postgresql://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  start(): Promise<void>;
  /** Fast shutdown: connections are cut, the server stops until `start`. */
  stop(): Promise<void>;
  /** Immediate shutdown, as a crash: no checkpoint, connections dropped; the server stays down until `start`. */
  crash(): Promise<void>;
  restart(): Promise<void>;
  remove(): Promise<void>;
}

export interface PrivateStandby extends PrivatePostgres {
  /** `pg_ctl promote`: the standby becomes a primary and accepts writes once this resolves. */
  promote(): Promise<void>;
}

export interface StandbyOptions {
  /** The primary waits at every commit until this standby has flushed it (`synchronous_standby_names`). */
  readonly synchronous?: boolean;
}

type Tool = (name: string, args: readonly string[]) => Promise<unknown>;

/** A temporary directory the server's user owns, and a runner of the server's tools as that user. */
async function serverDir(): Promise<{ dir: string; tool: Tool }> {
  const bin = binDir();
  if (bin === null) throw new Error("no PostgreSQL server binaries");
  const dir = await mkdtemp(join(tmpdir(), "writ-private-pg-"));
  const asRoot = userInfo().uid === 0;
  if (asRoot)
    await chown(
      dir,
      Number((await run("id", ["-u", "postgres"])).stdout.trim()),
      Number((await run("id", ["-g", "postgres"])).stdout.trim()),
    );
  const tool: Tool = (name, args) =>
    asRoot ? run("runuser", ["-u", "postgres", "--", join(bin, name), ...args]) : run(join(bin, name), [...args]);
  return { dir, tool };
}

/** A server on `port` over the data directory `dir/data`, started; removed again if it does not start. */
async function serve(dir: string, tool: Tool, port: number): Promise<PrivatePostgres & { ctl: (...args: string[]) => Promise<unknown> }> {
  const data = join(dir, "data");
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  const ctl = (...args: string[]) => tool("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", ...args]);
  const server = {
    port,
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    ctl,
    start: async () => void (await ctl("-o", options, "start")),
    stop: async () => void (await ctl("-m", "fast", "stop")),
    crash: async () => void (await ctl("-m", "immediate", "stop")),
    restart: async () => void (await ctl("-m", "fast", "-o", options, "restart")),
    remove: async () => {
      await ctl("-m", "immediate", "stop").catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await server.start();
  } catch (error) {
    await server.remove();
    throw error;
  }
  return server;
}

export async function startPrivatePostgres(port: number): Promise<PrivatePostgres> {
  const { dir, tool } = await serverDir();
  await tool("initdb", ["-D", join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync"]);
  return serve(dir, tool, port);
}

/**
 * A hot standby of `primary` on `port`, streaming from it (initdb's trust rules already admit replication from
 * 127.0.0.1). With `synchronous`, the primary's commits wait for this standby's flush from now on.
 */
export async function startStandby(primary: PrivatePostgres, port: number, options: StandbyOptions = {}): Promise<PrivateStandby> {
  const { dir, tool } = await serverDir();
  const name = `standby_${port}`;
  await tool("pg_basebackup", [
    "-h",
    "127.0.0.1",
    "-p",
    String(primary.port),
    "-U",
    "postgres",
    "-D",
    join(dir, "data"),
    "-R",
    "-X",
    "stream",
    "--no-sync",
    "-d",
    `application_name=${name}`,
  ]);
  const server = await serve(dir, tool, port);
  if (options.synchronous === true) {
    await psql(tool, primary.port, `ALTER SYSTEM SET synchronous_standby_names = '${name}'`);
    await psql(tool, primary.port, "SELECT pg_reload_conf()");
    await waitFor(tool, primary.port, `SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = '${name}'`);
  }
  return { ...server, promote: async () => void (await server.ctl("promote")) };
}

async function psql(tool: Tool, port: number, sql: string): Promise<string> {
  const { stdout } = (await tool("psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-AtXc", sql])) as { stdout: string };
  return stdout.trim();
}

/** Polls `sql` until it answers `t`, for at most 30 s. */
async function waitFor(tool: Tool, port: number, sql: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await psql(tool, port, sql)) !== "t") {
    if (Date.now() > deadline) throw new Error(`not true within 30 s on port ${port}: ${sql}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
