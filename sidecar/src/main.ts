#!/usr/bin/env node
/**
 * `writ-sidecar [--dev]`: starts the sidecar from the environment (docs/sidecar.md). SIGTERM or SIGINT shuts it
 * down gracefully; SIGHUP reloads the bundle keys and bundles. Everything the service says is a JSON line on stdout
 * (docs/sidecar.md, "Logs"): a configuration error is one `fatal` line and exit code 2; a failure to start is exit
 * code 1.
 * `writ-sidecar migrate` and `writ-sidecar import-lmdb <data-dir>`: the fleet database's commands
 * (storage/postgres/commands.ts, docs/fleet.md); `writ-sidecar compact <data-dir>`: a stopped sidecar's LMDB file rewritten
 * with the pages in use only (storage/lmdb/compact.ts); and `--help`, `--version` and a wrong argument: command-line
 * answers, in plain text like any other command's.
 */
import pkg from "../package.json";
import { ConfigError, loadConfig } from "./config.js";
import { createLogger, lifecycleLog, type Logger } from "./observability/logger.js";
import { startSidecar, type RunningSidecar } from "./sidecar.js";
import { InstanceInUseError } from "./storage/instance-in-use.js";
import { UnfitSessionsError } from "./storage/postgres/unfit-sessions.js";

const USAGE = `usage: writ-sidecar [--dev]
       writ-sidecar migrate
       writ-sidecar import-lmdb <data-dir>
       writ-sidecar compact <data-dir>
       writ-sidecar --version | --help

  --dev         development mode: keys are generated into the data dir (default .writ/data) when absent
  migrate       apply the database schema migrations (SERVICE_DATABASE_URL or SERVICE_DATABASE_URL_FILE) and exit
  import-lmdb   move a stopped sidecar's LMDB data dir (replay entries, audit trail, Trust Records) into the database
  compact       rewrite a stopped sidecar's LMDB data file with only the pages in use, giving back the space it freed

Configuration is read from the environment; see docs/sidecar.md.`;

/** Past the shutdown timeout, how long closing the stores may take before the process exits anyway. */
const CLOSE_GRACE_MS = 15_000;

/** The process exits with code 1 after `ms`, whatever is still pending: it never hangs holding its ports. */
function exitAfter(ms: number, log: Logger): void {
  setTimeout(() => {
    log.error(`shutdown did not complete within ${ms} ms: exiting`);
    process.exit(1);
  }, ms).unref();
}

/**
 * lmdb-js rejects promises of its own when a commit fails (a full disk): the stores answer 503 for the writes they
 * await, and such a rejection is only reported. Any other uncaught exception or unhandled rejection is a fault the
 * process cannot reason about: it says why, shuts down gracefully (within the shutdown timeout) and exits with 1.
 */
function exitOnFault(sidecar: RunningSidecar, shutdownTimeoutMs: number, log: Logger): void {
  let faulted = false;
  const fault = (kind: string) => (error: unknown) => {
    if (isFailedCommit(error)) {
      log.error({ err: error }, "data dir write failed");
      return;
    }
    log.fatal({ err: error }, `${kind}: shutting down`);
    if (faulted) return;
    faulted = true;
    process.exitCode = 1;
    exitAfter(shutdownTimeoutMs + CLOSE_GRACE_MS, log);
    void sidecar.close().finally(() => process.exit(1));
  };
  process.on("uncaughtException", fault("uncaught exception"));
  process.on("unhandledRejection", fault("unhandled rejection"));
}

/** A failed LMDB commit, as lmdb-js reports it (`Commit failed`, or the errno of the failed write, ENOSPC is 28). */
function isFailedCommit(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return "commitError" in error || /^No space left on device/.test(error.message) || (error as { code?: unknown }).code === 28;
}

/** SIGHUP reads the bundle keys and every bundle again (docs/bundles.md, "Reload"); a failed reload changes nothing. */
function reloadOnSighup(sidecar: RunningSidecar, log: Logger): void {
  process.on("SIGHUP", () => {
    void sidecar.context.bundles.reload().then((outcome) => {
      if (outcome.ok) log.info({ served: outcome.served, poll: outcome.poll }, `SIGHUP: reloaded, ${outcome.served} bundles served`);
      else log.error({ refused: outcome.refused, poll: outcome.poll }, "SIGHUP: reload refused, nothing changed");
    });
  });
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (argv.includes("--version") || argv.includes("-V")) {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  if (argv[0] === "compact") return compact(argv.slice(1));
  if (argv[0] === "migrate" || argv[0] === "import-lmdb") {
    const operands = argv[0] === "migrate" ? 0 : 1;
    if (argv.length !== operands + 1) {
      process.stderr.write(`writ-sidecar: ${argv[0]} takes ${operands === 0 ? "no arguments" : "one argument, the data dir"}\n${USAGE}\n`);
      return 2;
    }
    // Loaded here only: a sidecar on LMDB never loads pg.
    const commands = await import("./storage/postgres/commands.js");
    return argv[0] === "migrate" ? commands.migrateCommand(process.env) : commands.importLmdbCommand(process.env, argv[1]!);
  }
  const unknown = argv.filter((a) => a !== "--dev");
  if (unknown.length > 0) {
    process.stderr.write(`writ-sidecar: unknown argument \`${unknown[0]}\`\n${USAGE}\n`);
    return 2;
  }
  return serve(argv.includes("--dev"));
}

/** `writ-sidecar compact <data-dir>`: exit 0 once compacted, 1 when it failed (one line on stderr), 2 for bad arguments. */
async function compact(operands: readonly string[]): Promise<number> {
  if (operands.length !== 1) {
    process.stderr.write(`writ-sidecar: compact takes one argument, the data dir\n${USAGE}\n`);
    return 2;
  }
  const { compactDataDir } = await import("./storage/lmdb/compact.js");
  try {
    await compactDataDir(operands[0]!, (line) => process.stdout.write(`writ-sidecar: ${line}\n`));
    return 0;
  } catch (error) {
    process.stderr.write(`writ-sidecar: compact failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/** The service: from here on, every line is JSON on stdout, through one root logger. */
async function serve(dev: boolean): Promise<number> {
  const log = createLogger();
  let config;
  try {
    config = loadConfig(process.env, { dev });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    log.fatal({ code: "CONFIG_INVALID" }, e.message);
    return 2;
  }
  log.level = config.logLevel;
  const lifecycle = lifecycleLog(log);
  let sidecar: RunningSidecar;
  try {
    sidecar = await startSidecar(config, { log });
  } catch (e) {
    if (e instanceof ConfigError) {
      log.fatal({ code: "CONFIG_INVALID" }, e.message);
      return 2;
    }
    // Another live sidecar owns this instance's audit record log (`code: "INSTANCE_IN_USE"`), or a connection pooler
    // changed the database sessions (`code: "DATABASE_SESSIONS_UNFIT"`): the code says so to a supervisor.
    const code = e instanceof InstanceInUseError || e instanceof UnfitSessionsError ? { code: e.code } : {};
    log.fatal({ err: e, ...code }, `failed to start: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  exitOnFault(sidecar, config.shutdownTimeoutMs, log);
  reloadOnSighup(sidecar, lifecycle);
  // A signal during the shutdown (Ctrl-C reaches both `npm start` and this process) does not cut it short: the
  // shutdown timeout bounds it.
  const signal = await new Promise<string>((resolve) => {
    process.on("SIGTERM", () => resolve("SIGTERM"));
    process.on("SIGINT", () => resolve("SIGINT"));
  });
  lifecycle.info(`${signal}: finishing requests in flight, then flushing the data dir`);
  exitAfter(config.shutdownTimeoutMs + CLOSE_GRACE_MS, log);
  await sidecar.close();
  lifecycle.info("stopped");
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`writ-sidecar: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  },
);
