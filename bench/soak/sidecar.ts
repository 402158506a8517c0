/**
 * The built sidecar (`sidecar/dist/main.js`: `npm run build` first) on a seeded store, as its own process pinned to the
 * sidecar's cores (taskset), its output kept in a file for the run's report.
 */
import { spawn } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../../sidecar/dist/main.js", import.meta.url));
/** A store of millions opens in seconds; more means something is scanned at start. */
const START_TIMEOUT_MS = 120_000;

export interface RunningSidecar {
  readonly url: string;
  readonly pid: number;
  /** performance.now() when it said it listens: its sweep and prune timers started just before. */
  readonly listeningAt: number;
  /** Lines it wrote at warn or above while running (its level is warn). */
  lines(): number;
  stop(): Promise<void>;
}

export async function startSidecar(env: Readonly<Record<string, string>>, cpus: string | null, logFile: string): Promise<RunningSidecar> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
  const argv = [process.execPath, MAIN];
  const child = cpus === null ? spawn(argv[0]!, argv.slice(1), { env: { PATH: process.env["PATH"] ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] }) : spawn("taskset", ["-c", cpus, ...argv], { env: { PATH: process.env["PATH"] ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const log = createWriteStream(logFile);
  let output = "";
  let lines = 0;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the sidecar did not listen within ${START_TIMEOUT_MS} ms:\n${output.slice(-4_000)}`)), START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      log.write(chunk);
      const text = chunk.toString();
      lines += text.split("\n").filter((l) => l.trim() !== "").length;
      if (output.length < 1 << 20) output += text;
      const match = /Surface A listening on (http:\/\/[^"\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the sidecar exited with ${code} before listening:\n${output.slice(-4_000)}`));
    });
  });
  const listeningAt = performance.now();
  const linesAtStart = lines;
  let stopped: Promise<void> | null = null;
  return {
    url,
    pid: child.pid!,
    listeningAt,
    lines: () => lines - linesAtStart,
    stop: () =>
      (stopped ??= (async () => {
        if (child.exitCode === null) {
          const exited = new Promise((resolve) => child.once("exit", resolve));
          child.kill("SIGTERM");
          const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
          await exited;
          clearTimeout(timer);
        }
        await new Promise((resolve) => log.end(resolve));
      })()),
  };
}
