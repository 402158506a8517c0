/**
 * The built sidecar (`sidecar/dist/main.js`: `npm run build` first) on a seeded store, as its own process pinned to the
 * sidecar's cores (taskset), its output kept in a file for the run's report.
 */
import { spawn } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { cpuSecondsIn, statFields } from "../sidecar/load.js";

const MAIN = fileURLToPath(new URL("../../sidecar/dist/main.js", import.meta.url));
/** A store of millions opens in seconds; more means something is scanned at start. */
const START_TIMEOUT_MS = 120_000;

export interface RunningSidecar {
  readonly url: string;
  readonly pid: number;
  /** performance.now() when it said it listens: its sweep and prune timers started just before. */
  readonly listeningAt: number;
  /** What it logged at warn or above once listening (its level is warn): each message, with how often. */
  messages(): ReadonlyMap<string, number>;
  stop(): Promise<void>;
}

/** What a process has used so far, all its threads together (`/proc/<pid>/stat`). */
export interface ProcessUsage {
  readonly cpuSeconds: number;
  /** Faults that read a page from disk: in LMDB, a read of a mapped page the OS did not hold in memory. */
  readonly majorFaults: number;
}

export function processUsage(pid: number): ProcessUsage {
  const field = statFields(`/proc/${pid}/stat`);
  return { cpuSeconds: cpuSecondsIn(field), majorFaults: field(12) };
}

const QUIET_LEVELS: readonly unknown[] = ["info", "debug", "trace"];

/** A log line at warn or above (JSON, or plain text: a crash's stack) counted by its message. */
function count(messages: Map<string, number>, line: string): void {
  if (line.trim() === "") return;
  let message = line.slice(0, 200);
  try {
    const parsed = JSON.parse(line) as { msg?: unknown; level?: unknown };
    if (QUIET_LEVELS.includes(parsed.level)) return;
    message = `${String(parsed.level)}: ${String(parsed.msg)}`;
  } catch {
    // Not JSON: counted as it is.
  }
  messages.set(message, (messages.get(message) ?? 0) + 1);
}

/** `nodeArgs`: node's own flags for the sidecar (BENCH_SOAK_NODE_ARGS: `--cpu-prof`, which NODE_OPTIONS refuses). */
export async function startSidecar(
  env: Readonly<Record<string, string>>,
  cpus: string | null,
  logFile: string,
  nodeArgs: readonly string[] = [],
): Promise<RunningSidecar> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
  const argv = [process.execPath, ...nodeArgs, MAIN];
  const child =
    cpus === null
      ? spawn(argv[0]!, argv.slice(1), { env: { PATH: process.env["PATH"] ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] })
      : spawn("taskset", ["-c", cpus, ...argv], { env: { PATH: process.env["PATH"] ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const log = createWriteStream(logFile);
  let output = "";
  let listening = false;
  let partial = "";
  const messages = new Map<string, number>();
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the sidecar did not listen within ${START_TIMEOUT_MS} ms:\n${output.slice(-4_000)}`)),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      log.write(chunk);
      const text = chunk.toString();
      const lines = (partial + text).split("\n");
      partial = lines.pop()!;
      if (listening) for (const line of lines) count(messages, line);
      if (output.length < 1 << 20) output += text;
      const match = /Surface A listening on (http:\/\/[^"\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        listening = true;
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
  let stopped: Promise<void> | null = null;
  return {
    url,
    pid: child.pid!,
    listeningAt,
    messages: () => new Map(messages),
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
