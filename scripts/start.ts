/**
 * `npm start`: the sidecar in development mode on the shipped policies, from a fresh clone in as few seconds as the
 * machine allows. It builds only what the sidecar and the compiler need, and only what changed
 * (scripts/lib/incremental-build.ts), compiles policies/, starts `writ-sidecar --dev` with its JSON log on stdout and,
 * once `/health?probe=ready` answers 200, prints on stderr how long each step took and a `curl` for a first decision
 * (examples/evaluate-request.json). SIGINT and SIGTERM go to the sidecar, which shuts down gracefully; its exit code is
 * this script's.
 */
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { build } from "./lib/incremental-build.js";
import { EXAMPLE_REQUEST, firstDecisionCurl } from "./lib/first-decision.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const say = (line: string): void => void process.stderr.write(`start: ${line}\n`);
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const READY_POLL_MS = 100;

async function main(): Promise<number> {
  const began = performance.now();
  if (!(await build({ root: ROOT, targets: ["sidecar", "compiler"], declarations: false, say }))) return 1;
  const built = performance.now();

  // Standard output is the sidecar's JSON log alone: what the compiler says goes to standard error.
  const compile = spawnSync(process.execPath, [join(ROOT, "compiler/dist/cli.js"), "compile", "policies"], {
    cwd: ROOT,
    stdio: ["ignore", 2, 2],
  });
  if (compile.status !== 0) {
    say("compiling policies/ failed (above)");
    return compile.status ?? 1;
  }
  const compiled = performance.now();

  const sidecar = spawn(process.execPath, [join(ROOT, "sidecar/dist/main.js"), "--dev"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => sidecar.kill(signal));
  const exited = new Promise<number>((resolve) => sidecar.on("close", (code, signal) => resolve(code ?? (signal === null ? 1 : 128))));

  // The log passes through unchanged; the line saying where Surface A listens gives the URL to wait on.
  const listening = new Promise<string | null>((resolve) => {
    createInterface({ input: sidecar.stdout }).on("line", (line) => {
      process.stdout.write(`${line}\n`);
      const url = /"surface":"a".*listening on (http:\/\/[^"\s]+)/.exec(line)?.[1];
      if (url !== undefined) resolve(url);
    });
    void exited.then(() => resolve(null));
  });
  const url = await listening;
  if (url === null) return exited;
  while (!(await ready(url))) {
    if (sidecar.exitCode !== null) return exited;
    await new Promise((r) => setTimeout(r, READY_POLL_MS));
  }
  const now = performance.now();
  say(
    `ready in ${seconds(now - began)} (build ${seconds(built - began)}, compile policies ${seconds(compiled - built)}, sidecar ${seconds(now - compiled)}). A first decision:`,
  );
  process.stderr.write(`\n  ${firstDecisionCurl({ url, root: ROOT, cwd: process.env["INIT_CWD"] ?? ROOT, env: process.env })}\n\n`);
  say(`an executionId decides once: pasted again, it is refused (422 INV-013); edit "executionId" in ${EXAMPLE_REQUEST} to decide again`);
  return exited;
}

async function ready(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health?probe=ready`)).status === 200;
  } catch {
    return false;
  }
}

main().then(
  (code) => (process.exitCode = code),
  (e: unknown) => {
    say(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exitCode = 1;
  },
);
