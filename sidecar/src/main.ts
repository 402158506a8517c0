#!/usr/bin/env node
/**
 * `writ-sidecar [--dev]`: starts the sidecar from the environment (docs/sidecar.md). SIGTERM or SIGINT shuts it
 * down gracefully. A configuration error is one line on stderr and exit code 2; a failure to start is exit code 1.
 */
import { ConfigError, loadConfig } from "./config.js";
import { startSidecar } from "./sidecar.js";

const USAGE = `usage: writ-sidecar [--dev]

  --dev   development mode: keys are generated into the data dir (default .writ/data) when absent

Configuration is read from the environment; see docs/sidecar.md.`;

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const unknown = argv.filter((a) => a !== "--dev");
  if (unknown.length > 0) {
    process.stderr.write(`writ-sidecar: unknown argument \`${unknown[0]}\`\n${USAGE}\n`);
    return 2;
  }
  const config = loadConfig(process.env, { dev: argv.includes("--dev") });
  const sidecar = await startSidecar(config);
  for (const notice of sidecar.context.notices) process.stdout.write(`writ-sidecar: ${notice}\n`);
  if (sidecar.urls.a) process.stdout.write(`writ-sidecar: Surface A listening on ${sidecar.urls.a}\n`);
  if (sidecar.urls.b) process.stdout.write(`writ-sidecar: Surface B listening on ${sidecar.urls.b}\n`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stdout.write(`writ-sidecar: ${signal}: finishing requests in flight, then flushing the data dir\n`);
      void sidecar.close().then(resolve);
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof ConfigError) {
      process.stderr.write(`writ-sidecar: ${e.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`writ-sidecar: failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
