/**
 * What `writ` says about itself: `--version`, per-command help cut from `writ help`, and quiet output into a closed
 * pipe (`writ test policies | head -1`) from the built binary.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import pkg from "../package.json";
import { runInRepo as run } from "./support/cli-run.js";

const repo = new URL("../../", import.meta.url).pathname;

describe("writ --version", () => {
  it.each(["--version", "-V", "-v"])("%s prints the package version", async (flag) => {
    expect(await run(flag)).toEqual({ code: 0, out: pkg.version, err: "" });
  });
});

describe("per-command help", () => {
  it("`writ compile --help` prints compile's usage and options only, and exits 0", async () => {
    const r = await run("compile", "--help");
    expect(r.code).toBe(0);
    expect(r.out.split("\n")[0]).toMatch(/^usage: writ compile <path>\.\.\. +compile policies/);
    expect(r.out).toContain("--sign-key FILE");
    expect(r.out).not.toContain("--deny-warnings");
    expect(r.out.split("\n").at(-1)).toBe("every command and the exit codes: `writ help`");
  });

  it("-h, `writ help <command>` and a subcommand's help say the same", async () => {
    const help = await run("verify", "--help");
    expect(await run("verify", "-h")).toEqual(help);
    expect(await run("help", "verify")).toEqual(help);
    expect(help.out).toContain("--trust-root FILE");
    const pack = await run("bundle", "pack", "--help");
    expect(pack.out.split("\n")[0]).toMatch(/^usage: writ bundle pack /);
    expect(pack.out).not.toContain("bundle index");
    expect((await run("bundle", "--help")).out.match(/^usage: writ bundle \w+/gm)).toEqual([
      "usage: writ bundle pack",
      "usage: writ bundle inspect",
      "usage: writ bundle index",
    ]);
  });

  it("every command of `writ help` has its own --help, listing every option `writ help` gives it", async () => {
    const entries: { command: string; lines: string[] }[] = [];
    for (const line of (await run("help")).out.split("\n")) {
      if (/^ {2}\S/.test(line)) {
        const words = line.trim().split(/ {2,}/)[0]!.split(" ");
        const operands = words.findIndex((w) => /^[<[]/.test(w));
        entries.push({ command: words.slice(0, operands < 0 ? words.length : operands).join(" "), lines: [] });
      } else if (/^ {3,}--/.test(line)) entries.at(-1)?.lines.push(line);
    }
    expect(entries.map((e) => e.command)).toEqual(expect.arrayContaining(["eval", "test", "fmt"]));
    for (const { command, lines } of entries.filter((e) => e.command !== "conformance")) {
      const help = await run(...command.split(" "), "--help");
      expect(help.code, command).toBe(0);
      expect(help.out.split("\n")[0], command).toMatch(new RegExp(`^usage: writ ${command}\\b`));
      for (const option of lines) expect(help.out, `${command} --help`).toContain(option);
    }
  });

  it("`--help` after `--` is a path, not a request for help", async () => {
    expect((await run("fmt", "--check", "--", "--help")).out).not.toContain("usage:");
  });

  it("help for an unknown command is one line and exit 2", async () => {
    expect(await run("deploy", "--help")).toEqual({ code: 2, out: "", err: "writ: unknown command `deploy` (see `writ help`)" });
    expect(await run("help", "deploy")).toEqual({ code: 2, out: "", err: "writ: unknown command `deploy` (see `writ help`)" });
  });

  it("`writ conformance --help` is the suite's own", async () => {
    const r = await run("conformance", "--help");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^usage: writ conformance --surface a\|b/);
  });
});

describe("the built binary into a closed pipe", () => {
  const bin = join(repo, "compiler/bin/writ.js");
  const built = existsSync(join(repo, "compiler/dist/cli.js"));

  /** Runs `writ argv` with its stdout's reading end closed before it writes anything. */
  function intoClosedPipe(...argv: string[]): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, [bin, ...argv], { cwd: repo, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    return new Promise((resolve) => child.once("close", (code) => resolve({ code, stderr })));
  }

  it.runIf(built).each([["help"], ["test", "policies", "--verbose"]])(
    "`writ %s` exits with its own code, without a stack trace",
    async (...argv) => {
      const r = await intoClosedPipe(...argv);
      expect(r.stderr).not.toMatch(/EPIPE|Error|\n\s+at /);
      expect(r.code).toBe(0);
    },
  );
});
