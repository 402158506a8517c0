/**
 * A PostgreSQL server of a test's own, for tests that restart or stop the database (the machine's shared server is used
 * by other test files at the same time and must never be restarted by one). `initdb` into a temporary directory, trust
 * auth, 127.0.0.1 on a free port, a private socket directory; removed by `remove()`.
 *
 * Tests run as root on the project's machines, and PostgreSQL refuses to run as root: the server and its tools run as
 * the `postgres` user (`runuser`). Without the binaries, `privatePostgresUnavailable()` says why: the tests skip with that
 * line locally and fail with CI=true.
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
  restart(): Promise<void>;
  remove(): Promise<void>;
}

export async function startPrivatePostgres(port: number): Promise<PrivatePostgres> {
  const bin = binDir();
  if (bin === null) throw new Error("no PostgreSQL server binaries");
  const dir = await mkdtemp(join(tmpdir(), "writ-private-pg-"));
  const data = join(dir, "data");
  const asRoot = userInfo().uid === 0;
  if (asRoot)
    await chown(
      dir,
      Number((await run("id", ["-u", "postgres"])).stdout.trim()),
      Number((await run("id", ["-g", "postgres"])).stdout.trim()),
    );
  const tool = (name: string, args: readonly string[]) =>
    asRoot ? run("runuser", ["-u", "postgres", "--", join(bin, name), ...args]) : run(join(bin, name), [...args]);
  await tool("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  const ctl = (...args: string[]) => tool("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", ...args]);
  const server: PrivatePostgres = {
    port,
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    start: async () => void (await ctl("-o", options, "start")),
    stop: async () => void (await ctl("-m", "fast", "stop")),
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
