/**
 * A process whose parent never reaps it: run under `sh -c '"$@" & echo $!; exec sleep …'`, its parent becomes `sleep`,
 * which never waits, so once it dies it stays a zombie until that parent is killed (the zombie then goes to init).
 * Node's own children are reaped at once by libuv, so a zombie cannot be made otherwise from a test.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

export interface Unreaped {
  /** The process whose parent does not reap it. */
  readonly pid: number;
  /** Its parent, `sleep` (killing it lets init reap the zombie). */
  readonly parent: ChildProcess;
  /** Its stdout and stderr so far (the pid line first). */
  output(): string;
}

/** Starts `command args` under a parent that never reaps it, resolving once its pid is known. */
export async function startUnreaped(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<Unreaped> {
  const parent = spawn("sh", ["-c", '"$@" & echo "$!"; exec sleep 600', "sh", command, ...args], {
    ...options,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  parent.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  parent.stderr!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const pid = await new Promise<number>((resolve, reject) => {
    const onData = (): void => {
      const line = /^(\d+)\n/.exec(out);
      if (line !== null) resolve(Number(line[1]));
    };
    parent.stdout!.on("data", onData);
    parent.once("exit", () => reject(new Error(`the unreaping parent exited:\n${out}`)));
  });
  // Until the shell has become `sleep`, it may still reap the process (dash does when it sees its SIGCHLD).
  for (const until = Date.now() + 5_000; commandOf(parent.pid!) !== "sleep"; await sleep(5)) {
    if (Date.now() > until) throw new Error(`the unreaping parent did not become sleep:\n${out}`);
  }
  return { pid, parent, output: () => out };
}

function commandOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return null;
  }
}

/** The state letter of /proc/<pid>/stat (`Z` for a zombie); null when there is no such process. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]!;
  } catch {
    return null;
  }
}

/**
 * SIGKILLs `pid` and waits (up to 5 s) until it is a zombie: its main thread one (state `Z`), and its other threads gone.
 * @throws Error when it is not one by then
 */
export async function killIntoZombie(pid: number): Promise<void> {
  process.kill(pid, "SIGKILL");
  for (const until = Date.now() + 5_000; Date.now() < until; await sleep(10)) {
    if (processState(pid) === "Z" && threadsOf(pid) === 1) return;
  }
  throw new Error(`process ${pid} is not a zombie 5 s after SIGKILL (state ${processState(pid)}, ${threadsOf(pid)} threads)`);
}

function threadsOf(pid: number): number | null {
  try {
    return readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return null;
  }
}

/** Kills the parent (the zombie, if any, is then reaped by init) and waits for it. */
export async function endUnreaped(unreaped: Unreaped): Promise<void> {
  try {
    process.kill(unreaped.pid, "SIGKILL");
  } catch {
    // Gone already (a zombie also takes the signal without error).
  }
  if (unreaped.parent.exitCode === null && unreaped.parent.signalCode === null) {
    const exited = new Promise((resolve) => unreaped.parent.once("exit", resolve));
    unreaped.parent.kill("SIGKILL");
    await exited;
  }
}
