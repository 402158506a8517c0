/**
 * A script run by `bash -euo pipefail -c` in a process group of its own, so that everything it started in the
 * background (sidecars, and npx's children) is stopped with it: SIGTERM to the group, as a user's Ctrl-C or a
 * supervisor would, then a wait until no process of it is left. A process `exit` hook SIGKILLs the groups still there,
 * so that none outlives the test worker.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { constants } from "node:os";

/** How long a group may take to stop after SIGTERM before it is killed (the sidecar's own shutdown deadline is 10 s). */
const STOP_GRACE_MS = 60_000;

const groups = new Set<number>();
let hooked = false;

function alive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

function signal(group: number, name: NodeJS.Signals): void {
  try {
    process.kill(-group, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

export interface ShellRun {
  /** The script's exit status (its background commands may still run). */
  readonly exit: Promise<number>;
  stdout(): string;
  stderr(): string;
  /** SIGTERM to the group, and the wait until it is gone (SIGKILL after STOP_GRACE_MS). */
  stop(): Promise<void>;
}

export function runShell(script: string, cwd: string, env: Readonly<Record<string, string>>, logPrefix: string): ShellRun {
  if (!hooked) {
    hooked = true;
    process.once("exit", () => groups.forEach((group) => signal(group, "SIGKILL")));
  }
  const outFile = `${logPrefix}.out`;
  const errFile = `${logPrefix}.err`;
  const out = openSync(outFile, "w");
  const err = openSync(errFile, "w");
  const child = spawn("bash", ["-euo", "pipefail", "-c", script], { cwd, env, detached: true, stdio: ["ignore", out, err] });
  closeSync(out);
  closeSync(err);
  const group = child.pid!;
  groups.add(group);
  const exit = new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, name) => resolve(code ?? 128 + (name === null ? 0 : constants.signals[name])));
  });
  const stop = async (): Promise<void> => {
    signal(group, "SIGTERM");
    const deadline = Date.now() + STOP_GRACE_MS;
    while (alive(group)) {
      if (Date.now() > deadline) signal(group, "SIGKILL");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    groups.delete(group);
  };
  return { exit, stdout: () => readFileSync(outFile, "utf8"), stderr: () => readFileSync(errFile, "utf8"), stop };
}
