/**
 * A temporary directory set up like a user's clone after `npm install && npm run build`: the built packages and
 * node_modules are symlinks to this repository (read only: no block writes into them; `npx writ` resolves through
 * node_modules/.bin), `policies/` (sources only, as git has them) and `examples/` are copies, since blocks write there.
 * Beside the clone: the logs of each run, and the temporary directory (TMPDIR) of the blocks. `dispose()` stops every
 * process started and removes it all.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { REPO, findBlock, where } from "./markdown.js";
import { runShell, type ShellRun } from "./processes.js";
import { blockScript } from "./script.js";
import type { BlockRef, BlockRun, Service, ShellBlock } from "./types.js";

const LINKED = [
  "package.json",
  "package-lock.json",
  "node_modules",
  "runtime",
  "wire",
  "compiler",
  "language-server",
  "sidecar",
  "sdk",
  "conformance",
  "playground",
  "editors",
];
const COPIED = ["policies", "examples"];
/** Compiled bundle files (.gitignore): a fresh clone has none. */
const BUILD_OUTPUT = new Set(["signals.schema.json", "policy.ir.json", "bundle.manifest.json", "bundle.sig"]);

/**
 * What every run gets: the PATH of a shell, without the node_modules/.bin that npm and vitest put on this process's
 * (a bare `writ` in a doc fails, as in a user's shell); npx must run the clone's `writ`: offline, a name missing from
 * node_modules/.bin fails instead of fetching a registry package of that name.
 */
function baseEnv(temp: string): Record<string, string> {
  const path = (process.env["PATH"] ?? "/usr/bin:/bin")
    .split(":")
    .filter((dir) => !dir.includes("node_modules"))
    .join(":");
  return { PATH: path, HOME: process.env["HOME"] ?? temp, TMPDIR: temp, npm_config_offline: "true", npm_config_update_notifier: "false" };
}

const tail = (text: string, lines: number): string => text.trimEnd().split("\n").slice(-lines).join("\n");

/** A block or harness script that ran to its end; its background commands run until `stop()`. */
export interface Ran {
  /** `file:line` of the block, for the checks' messages. */
  readonly where: string;
  readonly stdout: string;
  readonly stderr: string;
  stop(): Promise<void>;
}

export class Clone {
  readonly dir: string;
  private readonly base: string;
  private readonly runs: ShellRun[] = [];
  private count = 0;

  private constructor(base: string) {
    this.base = base;
    this.dir = join(base, "clone");
    mkdirSync(this.dir);
    mkdirSync(join(base, "logs"));
    mkdirSync(join(base, "tmp"));
    for (const name of LINKED) symlinkSync(join(REPO, name), join(this.dir, name));
    for (const name of COPIED)
      cpSync(join(REPO, name), join(this.dir, name), { recursive: true, filter: (source) => !BUILD_OUTPUT.has(basename(source)) });
  }

  static create(): Clone {
    return new Clone(mkdtempSync(join(tmpdir(), "writ-docs-")));
  }

  /** A directory beside the clone (a host's own files, say), created empty. */
  beside(name: string): string {
    const dir = join(this.base, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** Runs the block `ref` names as `run` says, to its end. @throws Error naming the doc line when its exit differs */
  block(ref: BlockRef, run: BlockRun): Promise<Ran> {
    const block = findBlock(ref);
    return this.execute(block, blockScript(block, run.substitutions, run.services ?? []), run.env ?? {}, run.exit ?? 0);
  }

  /** A script of the test's own (what a block presumes done first), named `label` in messages. */
  script(label: string, text: string, options: { env?: Record<string, string>; services?: readonly Service[] } = {}): Promise<Ran> {
    const block = { file: `(test) ${label}`, line: 0, text };
    return this.execute(block, blockScript(block, [], options.services ?? []), options.env ?? {}, 0);
  }

  private async execute(block: ShellBlock, script: string, env: Record<string, string>, expected: number): Promise<Ran> {
    const run = runShell(script, this.dir, { ...baseEnv(join(this.base, "tmp")), ...env }, join(this.base, "logs", String(++this.count)));
    this.runs.push(run);
    const status = await run.exit;
    const ran = { where: where(block), stdout: run.stdout(), stderr: run.stderr(), stop: () => run.stop() };
    if (status !== expected) {
      await run.stop();
      throw new Error(
        `${ran.where}: the block ended with exit status ${status}, not ${expected}\n--- stderr (end)\n${tail(ran.stderr, 30)}\n--- stdout (end)\n${tail(ran.stdout, 30)}`,
      );
    }
    return ran;
  }

  async dispose(): Promise<void> {
    await Promise.all(this.runs.map((run) => run.stop()));
    rmSync(this.base, { recursive: true, force: true });
  }
}

/** `body` with a fresh clone, disposed of whatever happens. */
export async function withClone<T>(body: (clone: Clone) => Promise<T>): Promise<T> {
  const clone = Clone.create();
  try {
    return await body(clone);
  } finally {
    await clone.dispose();
  }
}
