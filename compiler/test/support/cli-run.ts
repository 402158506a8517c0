import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { main } from "../../src/cli/main.js";

const repo = new URL("../../../", import.meta.url).pathname;

/** A scratch working directory per test, holding a copy of the repository's policy sources (no bundles). */
export interface Scratch {
  cwd: string;
  out: string[];
  err: string[];
  /** Runs `writ ...argv` in `cwd`, collecting its output; resolves to the exit code. */
  run(...argv: string[]): Promise<number>;
}

export function scratchCli(): Scratch {
  const scratch: Scratch = {
    cwd: "",
    out: [],
    err: [],
    run: (...argv) => main(argv, { cwd: scratch.cwd, out: (l) => scratch.out.push(l), err: (l) => scratch.err.push(l) }),
  };
  beforeEach(() => {
    scratch.cwd = mkdtempSync(join(tmpdir(), "writ-cli-"));
    cpSync(join(repo, "policies"), join(scratch.cwd, "policies"), {
      recursive: true,
      filter: (src) => !/bundle|\.json$/.test(src) || src.endsWith("policy.test.json"),
    });
    scratch.out.length = 0;
    scratch.err.length = 0;
  });
  afterEach(() => rmSync(scratch.cwd, { recursive: true, force: true }));
  return scratch;
}

/** Runs `writ ...argv` in the repository (nothing written), collecting its output. */
export async function runInRepo(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { cwd: repo, out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}
