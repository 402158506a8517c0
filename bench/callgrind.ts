/**
 * A sidecar run under valgrind's callgrind, and the instructions it executes between two points (bench/instructions.ts,
 * bench/budget.ts): started with `--vgdb=yes` and one output file a thread, zeroed and dumped through vgdb.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile } from "node:fs/promises";
import { request, type Agent } from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";

export const API_KEY = "bench-api-key-0123456789abcdef";
const PORTS = { first: 47100, last: 47199 } as const;
/** Starting under valgrind takes a minute or more (longer on a loaded machine). */
const START_TIMEOUT_MS = 600_000;
const CONTROL_TIMEOUT_MS = 120_000;
/** Valgrind's thread 1: the main thread, node's event loop. */
const MAIN_THREAD = "01";

const execFileAsync = promisify(execFile);

/** What SIGINT or SIGTERM must not leave behind: the valgrind'd sidecars running, and the scratch directories. */
export const live = { children: new Set<ChildProcess>(), dirs: new Set<string>() };

export function cleanUpAndExit(signal: NodeJS.Signals): void {
  for (const child of live.children) child.kill("SIGKILL");
  for (const dir of live.dirs) rmSync(dir, { recursive: true, force: true });
  console.error(`\n${signal}: stopped the sidecars and removed the scratch directories`);
  process.exit(signal === "SIGINT" ? 130 : 143);
}

/** A free port in 47100–47199 (anything else may hold some). */
export async function freePort(taken: Set<number>): Promise<number> {
  for (let port = PORTS.first; port <= PORTS.last; port++) {
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
    if (free) {
      taken.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${PORTS.first}–${PORTS.last}`);
}

/** The callgrind'd sidecar: its pid is node's (valgrind runs the program in its own process). */
export interface Sidecar {
  /** Surface A's URL. */
  readonly url: string;
  /** Surface B's, when SERVICE_B_PORT is not `off`. */
  readonly urlB: string | null;
  readonly pid: number;
  readonly outDir: string;
  /** Where valgrind's gdbserver and vgdb meet (their FIFOs), in the run's directory. */
  readonly vgdbPrefix: string;
  /** Resolves once the sidecar writes `marker` to its stdout or stderr after this call; rejects after `timeoutMs`. */
  said(marker: string, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The callgrind options of every run the benchmarks count: vgdb, so that `control` can zero and dump around the work
 * measured; one output file a thread (`outFile` holds `%p`); no per-line or per-instruction data.
 */
export function callgrindOptions(vgdbPrefix: string, outFile: string): string[] {
  return [
    "--tool=callgrind",
    "--vgdb=yes",
    `--vgdb-prefix=${vgdbPrefix}`,
    "--separate-threads=yes",
    `--callgrind-out-file=${outFile}`,
    "--dump-line=no",
    "--dump-instr=no",
  ];
}

export async function startUnderCallgrind(
  main: string,
  dir: string,
  env: Readonly<Record<string, string>>,
  nodeFlags: readonly string[] = [],
): Promise<Sidecar> {
  const outDir = join(dir, "callgrind");
  const vgdbPrefix = join(dir, "vgdb");
  await mkdir(outDir, { recursive: true });
  const args = [...callgrindOptions(vgdbPrefix, join(outDir, "cg.%p")), "--smc-check=all-non-file", process.execPath, ...nodeFlags, main];
  const child = spawn("valgrind", args, { env: { PATH: process.env["PATH"] ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  live.children.add(child);
  child.once("exit", () => live.children.delete(child));
  let output = "";
  // Both surfaces' lines, when Surface B listens too: with port 0 each says the port the system gave it.
  const wantsB = (env["SERVICE_B_PORT"] ?? "off") !== "off";
  const { url, urlB } = await new Promise<{ url: string; urlB: string | null }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the sidecar did not listen under valgrind within ${START_TIMEOUT_MS / 1000} s:\n${output.slice(-4_000)}`)),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      if (output.length < 1 << 20) output += chunk.toString();
      const a = /Surface A listening on (http:\/\/[^"\s]+)/.exec(output);
      const b = /Surface B listening on (http:\/\/[^"\s]+)/.exec(output);
      if (a && (b || !wantsB)) {
        clearTimeout(timer);
        resolve({ url: a[1]!, urlB: b ? b[1]! : null });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`valgrind/the sidecar exited with ${code} before listening:\n${output.slice(-4_000)}`));
    });
  }).catch(async (e: unknown) => {
    await stopChild(child);
    throw e;
  });
  return {
    url,
    urlB,
    pid: child.pid!,
    outDir,
    vgdbPrefix,
    said: (marker, timeoutMs) => said(child, marker, timeoutMs),
    stop: () => stopChild(child),
  };
}

function said(child: ChildProcess, marker: string, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let tail = "";
    const onData = (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-(marker.length + 4_096));
      if (tail.includes(marker)) done(null);
    };
    const timer = setTimeout(() => done(new Error(`the sidecar did not say \`${marker}\` within ${timeoutMs / 1000} s`)), timeoutMs);
    const done = (error: Error | null) => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.stderr?.off("data", onData);
      if (error === null) resolve();
      else reject(error);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  // Shutting down (and callgrind's last dump) is slow under valgrind too.
  const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Callgrind's `zero` or `dump` monitor command, sent with vgdb as `callgrind_control -z` / `-d` send it, but with
 * `--max-invoke-ms=0`: vgdb waits for the process to poll for it (within a fraction of a second: the sidecar's own
 * timers keep its main thread running) instead of forcing it out of a system call with ptrace, which with valgrind
 * 3.19 and node's dozen threads now and then loses the command and leaves vgdb (so callgrind_control) hanging.
 */
/** A process run under callgrind with `--vgdb=yes`: what `control` and `countDuring` need of it. */
export type Callgrinded = Pick<Sidecar, "pid" | "outDir" | "vgdbPrefix">;

export async function control(command: "zero" | "dump", sidecar: Callgrinded): Promise<void> {
  await execFileAsync("vgdb", [`--vgdb-prefix=${sidecar.vgdbPrefix}`, `--pid=${sidecar.pid}`, "--max-invoke-ms=0", command], {
    timeout: CONTROL_TIMEOUT_MS,
  }).catch((e: unknown) => {
    throw new Error(
      `vgdb ${command} to the callgrind'd sidecar (pid ${sidecar.pid}) failed or did not return in ${CONTROL_TIMEOUT_MS / 1000} s`,
      { cause: e },
    );
  });
}

/** Instructions counted between a zero and a dump. */
export interface Count {
  /** All threads together. */
  readonly all: number;
  /** The main thread (the event loop, and what V8 does on it). */
  readonly main: number;
}

/**
 * Zeroes, runs `work`, dumps: what was executed in between (one `cg.<pid>.<part>-<thread>` file a thread). With
 * `keepIn`, the dump's files are also copied there, for `callgrind_annotate`.
 */
export async function countDuring(sidecar: Callgrinded, work: () => Promise<void>, keepIn?: string): Promise<Count> {
  const before = new Set(await readdir(sidecar.outDir));
  await control("zero", sidecar);
  await work();
  await control("dump", sidecar);
  const files = (await readdir(sidecar.outDir)).filter((name) => !before.has(name) && name.startsWith(`cg.${sidecar.pid}.`));
  const parts = new Set(files.map((name) => name.slice(0, name.lastIndexOf("-"))));
  if (parts.size !== 1 || !files.some((name) => name.endsWith(`-${MAIN_THREAD}`))) {
    throw new Error(
      `expected one new callgrind dump (a file a thread, the main thread's among them) in ${sidecar.outDir}, found ${files.join(", ") || "none"}`,
    );
  }
  if (keepIn !== undefined) {
    await mkdir(keepIn, { recursive: true });
    for (const name of files) await copyFile(join(sidecar.outDir, name), join(keepIn, name));
  }
  let all = 0;
  let main = 0;
  for (const name of files) {
    const totals = /^totals:\s*(\d+)/m.exec(await readFile(join(sidecar.outDir, name), "utf8"));
    if (!totals) throw new Error(`${name} has no totals line`);
    all += Number(totals[1]);
    if (name.endsWith(`-${MAIN_THREAD}`)) main = Number(totals[1]);
  }
  return { all, main };
}

export function post(agent: Agent, target: URL, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", authorization: `Bearer ${API_KEY}`, "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
