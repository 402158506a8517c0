/**
 * `npm test`'s steps (scripts/lib/step-runner.ts), run on a package whose scripts pass, fail, and record that they ran.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSteps, type Step } from "../../scripts/lib/step-runner.js";

const node = (code: string): string => `node -e ${JSON.stringify(code)}`;
const SCRIPTS = {
  pass: node("console.log('all fine')"),
  fail: node("console.error('line 3: broken'); process.exit(3)"),
  record: node("require('fs').writeFileSync('ran', '')"),
};

let cwd: string;
beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), "writ-step-runner-"));
  writeFileSync(join(cwd, "package.json"), JSON.stringify({ name: "steps", private: true, scripts: SCRIPTS }));
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

async function run(plan: readonly Step[]): Promise<{ status: number; said: string[]; written: string }> {
  rmSync(join(cwd, "ran"), { force: true });
  const said: string[] = [];
  let written = "";
  const status = await runSteps(plan, { cwd, say: (line) => void said.push(line), write: (text) => void (written += text) });
  return { status, said, written };
}

describe("runSteps", () => {
  it("passes when every step passes; a quiet step says it passed and keeps its output", async () => {
    const { status, said, written } = await run([
      { name: "first", script: "pass", streams: true },
      { name: "check", script: "pass" },
      { name: "then", script: "record", after: ["first", "check"], streams: true },
    ]);
    expect(status).toBe(0);
    expect(said).toContainEqual(expect.stringMatching(/^check passed in \d+\.\d s$/));
    expect(said.at(-1)).toMatch(/^every step passed in \d+\.\d s$/);
    expect(written).toBe("");
    expect(existsSync(join(cwd, "ran"))).toBe(true);
  });

  it("a failed step: what runs after it does not run, the others run to their end, and a quiet one's output is printed", async () => {
    const { status, said, written } = await run([
      { name: "build", script: "fail", streams: true },
      { name: "lint", script: "fail" },
      { name: "check", script: "pass" },
      { name: "tests", script: "record", after: ["check", "build"], streams: true },
    ]);
    expect(status).toBe(1);
    expect(existsSync(join(cwd, "ran"))).toBe(false);
    expect(said).toContainEqual(expect.stringMatching(/^lint FAILED \(its output follows at the end\) in \d+\.\d s$/));
    expect(said).toContainEqual(expect.stringMatching(/^check passed/));
    expect(said.at(-1)).toMatch(/^failed in \d+\.\d s: build, lint; not run: tests$/);
    expect(written).toBe("\n--- lint (npm run fail) failed:\nline 3: broken\n");
  });

  it("refuses a plan whose step runs after one that is not before it, or two steps of one name, running none of it", async () => {
    await expect(
      run([
        { name: "tests", script: "record" },
        { name: "check", script: "pass", after: ["build"] },
      ]),
    ).rejects.toThrow("step check runs after build, which is not an earlier step");
    await expect(
      run([
        { name: "tests", script: "record" },
        { name: "tests", script: "pass" },
      ]),
    ).rejects.toThrow("two steps are named tests");
    expect(existsSync(join(cwd, "ran"))).toBe(false);
  });
});
