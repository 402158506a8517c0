#!/usr/bin/env node
/**
 * `writ-sidecar [--dev]`: starts the sidecar from the environment (docs/sidecar.md). SIGTERM or SIGINT shuts it
 * down gracefully; SIGHUP reloads the bundle keys and bundles. Everything the service says is a JSON line on stdout
 * (docs/sidecar.md, "Logs"): a configuration error is one `fatal` line and exit code 2; a failure to start is exit
 * code 1.
 * `writ-sidecar <command> <operands…>`: a storage engine's command (`migrate`, `import-lmdb`, `compact`: each engine's
 * engine.ts, from the registry), its progress and its failure in plain text like any other command's: exit code 0
 * done, 1 failed, 2 wrong arguments; so are `--help`, `--version` and a wrong argument.
 */
import cluster from "node:cluster";
import pkg from "../package.json";
import { ConfigError, loadConfig } from "./config.js";
import { createLogger, lifecycleLog, type Logger } from "./observability/logger.js";
import { announceServing, leaveSupervisor } from "./processes/member.js";
import { superviseProcesses } from "./processes/supervisor.js";
import { startSidecar, type RunningSidecar } from "./sidecar.js";
import type { EngineCommand } from "./storage/engine.js";
import { ENGINE_COMMANDS, isFailedWrite } from "./storage/registry.js";
import { storageWhat } from "./storage/storage-config.js";
import { StartRefusal } from "./storage/start-refusal.js";

const USAGE = [
  "usage: writ-sidecar [--dev]",
  ...ENGINE_COMMANDS.map((c) => `       writ-sidecar ${[c.name, ...c.operands].join(" ")}`),
  "       writ-sidecar --version | --help",
  "",
  `  ${"--dev".padEnd(12)}  development mode: keys are generated into the data dir (default .writ/data) when absent`,
  ...ENGINE_COMMANDS.map((c) => `  ${c.name.padEnd(12)}  ${c.summary}`),
  "",
  "Configuration is read from the environment; see docs/sidecar.md.",
].join("\n");

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
 * A storage engine's report of a write its stores already answered 503 (lmdb-js rejects promises of its own when a
 * commit fails: StorageEngine `failedWrite`) is only logged. Any other uncaught exception or unhandled rejection is a
 * fault the process cannot reason about: it says why, shuts down gracefully (within the shutdown timeout) and exits 1.
 */
function exitOnFault(sidecar: RunningSidecar, shutdownTimeoutMs: number, log: Logger): void {
  let faulted = false;
  const fault = (kind: string) => (error: unknown) => {
    const { storage } = sidecar.context.config;
    if (isFailedWrite(storage, error)) {
      log.error({ err: error }, `${storageWhat(storage)} write failed`);
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
  const command = ENGINE_COMMANDS.find((c) => c.name === argv[0]);
  if (command !== undefined) return runCommand(command, argv.slice(1));
  const unknown = argv.filter((a) => a !== "--dev");
  if (unknown.length > 0) {
    process.stderr.write(`writ-sidecar: unknown argument \`${unknown[0]}\`\n${USAGE}\n`);
    return 2;
  }
  return serve(argv.includes("--dev"));
}

/** An engine's command: exit 0 once done, 1 when it failed (one line on stderr), 2 for a wrong number of arguments. */
async function runCommand(command: EngineCommand, operands: readonly string[]): Promise<number> {
  const { name, operands: expected } = command;
  if (operands.length !== expected.length) {
    const takes =
      expected.length === 0 ? "no arguments" : `${expected.length} argument${expected.length === 1 ? "" : "s"}: ${expected.join(" ")}`;
    process.stderr.write(`writ-sidecar: ${name} takes ${takes}\n${USAGE}\n`);
    return 2;
  }
  try {
    await command.run(operands, process.env, (line) => process.stdout.write(`writ-sidecar: ${line}\n`));
    return 0;
  } catch (error) {
    process.stderr.write(`writ-sidecar: ${name} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/** The service: from here on, every line is JSON on stdout, through one root logger. */
async function serve(dev: boolean): Promise<number> {
  let log = createLogger();
  let config;
  try {
    config = loadConfig(process.env, { dev });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    log.fatal({ code: "CONFIG_INVALID" }, e.message);
    return 2;
  }
  log.level = config.logLevel;
  const { count, index } = config.processes;
  if (count > 1 && cluster.isPrimary)
    return superviseProcesses({ count, log: lifecycleLog(log), stopTimeoutMs: config.shutdownTimeoutMs + 2 * CLOSE_GRACE_MS });
  if (index !== null) log = log.child({ process: index });
  const lifecycle = lifecycleLog(log);
  let sidecar: RunningSidecar;
  try {
    sidecar = await startSidecar(config, { log });
  } catch (e) {
    if (e instanceof ConfigError) {
      log.fatal({ code: "CONFIG_INVALID" }, e.message);
      return 2;
    }
    // The store refused the start for a reason with a code (another live sidecar owns this instance's audit record log,
    // `INSTANCE_IN_USE`; a connection pooler changed the database sessions): the code says so to a supervisor.
    const code = e instanceof StartRefusal ? { code: e.code } : {};
    log.fatal({ err: e, ...code }, `failed to start: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  exitOnFault(sidecar, config.shutdownTimeoutMs, log);
  reloadOnSighup(sidecar, lifecycle);
  announceServing();
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

main(process.argv.slice(2))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`writ-sidecar: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 1;
    },
  )
  .finally(leaveSupervisor);
