/**
 * Runs a TypeScript worker from ./fixtures in its own Node process (`node --import tsx`, which works on
 * Node 20.6+ with tsx 4) and exposes its stdout as complete lines.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";

const RUNTIME_DIR = fileURLToPath(new URL("../..", import.meta.url));

export interface Worker {
  readonly child: ChildProcessWithoutNullStreams;
  /** Complete stdout lines so far (a line is counted only once its newline has arrived). */
  readonly lines: string[];
  readonly stderr: () => string;
  /** Resolves with the first line equal to `line`; rejects if the process ends first. */
  waitForLine(line: string): Promise<void>;
  /** Resolves when the process has exited and its stdio is drained. */
  readonly closed: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
}

export function startWorker(fixture: string, args: readonly string[]): Worker {
  const script = fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { cwd: RUNTIME_DIR, stdio: "pipe" });
  const lines: string[] = [];
  const waiters: Array<{ line: string; resolve: () => void; reject: (e: Error) => void }> = [];
  let partial = "";
  let err = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    for (const line of parts) {
      lines.push(line);
      for (const w of waiters.filter((x) => x.line === line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  child.stderr.on("data", (chunk: string) => {
    err += chunk;
  });
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("close", (code, signal) => {
      for (const w of waiters.splice(0)) {
        w.reject(new Error(`${fixture} ended (code ${code}, signal ${signal}) before "${w.line}": ${err}`));
      }
      resolve({ code, signal });
    });
  });
  return {
    child,
    lines,
    stderr: () => err,
    closed,
    waitForLine: (line) =>
      lines.includes(line)
        ? Promise.resolve()
        : child.exitCode !== null || child.signalCode !== null
          ? Promise.reject(new Error(`${fixture} already ended: ${err}`))
          : new Promise<void>((resolve, reject) => waiters.push({ line, resolve, reject })),
  };
}
