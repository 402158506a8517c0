/**
 * The suite end to end, as CI and an implementer run it: the fixture policies compiled and signed with `writ`, a
 * fresh built sidecar, and the BUILT command lines spawned against both surfaces (`writ-conformance`, and `writ
 * conformance` once), with exit codes, the table on stdout and the JSON report on disk. Against writ every case
 * passes and none is skipped.
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConformanceReport } from "../src/report.js";
import { killAllBuiltSidecars } from "../../sidecar/test/support/built-sidecar.js";
import { API_KEY, CONFORMANCE_CLI, compileFixtures, REPO, startWrit, WRIT_CLI, type Fixtures, type Writ } from "./support/writ.js";

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function spawnCli(args: readonly string[]): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: REPO, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

let fixtures: Fixtures;
let writ: Writ;
beforeAll(async () => {
  fixtures = await compileFixtures();
  writ = await startWrit(fixtures);
});
afterAll(async () => {
  await writ?.stop();
  await killAllBuiltSidecars();
  await fixtures?.remove();
});

async function reportAt(path: string): Promise<ConformanceReport> {
  return JSON.parse(await readFile(path, "utf8")) as ConformanceReport;
}

function expectAllPassed(report: ConformanceReport, surface: "a" | "b", target: string): void {
  expect(report.cases.filter((c) => c.outcome !== "pass").map((c) => ({ id: c.id, outcome: c.outcome, failures: c.failures }))).toEqual([]);
  expect(report).toMatchObject({ suite: "writ-conformance", surface, target, passed: true, totals: { fail: 0, skip: 0 } });
  expect(report.totals.pass).toBe(report.cases.length);
  expect(report.cases.length).toBeGreaterThan(50);
  expect(report.publicKeyId).toMatch(/^[0-9a-f]{32}$/);
  expect(report.sections.reduce((n, s) => n + s.pass, 0)).toBe(report.cases.length);
}

describe("against a fresh writ sidecar", () => {
  it("writ-conformance --surface a: every case passes (exit 0), the table and the report say so", async () => {
    const reportPath = join(fixtures.dir, "report-a.json");
    const ran = await spawnCli([
      CONFORMANCE_CLI,
      "--surface",
      "a",
      "--base-url",
      writ.surfaceA,
      "--api-key",
      API_KEY,
      "--public-key",
      fixtures.publicKey,
      "--report",
      reportPath,
    ]);
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    const report = await reportAt(reportPath);
    expectAllPassed(report, "a", writ.surfaceA);
    expect(ran.stdout).toContain(`writ conformance: Surface A at ${writ.surfaceA} (${report.cases.length} cases`);
    expect(ran.stdout).toMatch(/^section {2}pass {2}fail {2}skip$/m);
    expect(ran.stdout).toMatch(/^2\.9 +\d+ +0 +0$/m);
    expect(ran.stdout).toContain(`PASS: ${report.cases.length} passed`);
    expect(ran.stdout).toContain(`report: ${reportPath}`);
    // The runLast case ran last.
    expect(report.cases.at(-1)!.id).toBe("a.limits.rate-limit");
  });

  it("writ-conformance --surface b: every case passes", async () => {
    const reportPath = join(fixtures.dir, "report-b.json");
    const ran = await spawnCli([
      CONFORMANCE_CLI,
      "--surface",
      "b",
      "--base-url",
      writ.surfaceB,
      "--api-key",
      API_KEY,
      "--public-key",
      fixtures.publicKey,
      "--report",
      reportPath,
    ]);
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    expectAllPassed(await reportAt(reportPath), "b", writ.surfaceB);
  });

  it("writ conformance (the compiler's CLI) runs the same suite: Surface B again passes", async () => {
    const reportPath = join(fixtures.dir, "report-b-writ.json");
    const ran = await spawnCli([
      WRIT_CLI,
      "conformance",
      "--surface",
      "b",
      "--base-url",
      writ.surfaceB,
      "--api-key",
      API_KEY,
      "--public-key",
      fixtures.publicKey,
      "--report",
      reportPath,
    ]);
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    expectAllPassed(await reportAt(reportPath), "b", writ.surfaceB);
  });

  it("without --public-key the signature cases are skipped, not failed", async () => {
    const reportPath = join(fixtures.dir, "report-unsigned.json");
    const ran = await spawnCli([
      CONFORMANCE_CLI,
      "--surface",
      "a",
      "--base-url",
      writ.surfaceA,
      "--api-key",
      API_KEY,
      "--only",
      "a.evaluate.",
      "--report",
      reportPath,
    ]);
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    const report = await reportAt(reportPath);
    expect(report.cases.filter((c) => c.outcome === "skip").map((c) => [c.id, c.skipReason])).toEqual([
      ["a.evaluate.signed", "needs the server's public key (--public-key)"],
    ]);
    expect(report).toMatchObject({ passed: true, publicKeyId: null, totals: { fail: 0, skip: 1 } });
    expect(ran.stdout).toContain("signatures: not checked (no --public-key); those cases are skipped");
  });

  it("a wrong API key: the cases fail (exit 1), each with its message in the table", async () => {
    const reportPath = join(fixtures.dir, "report-wrong-key.json");
    const ran = await spawnCli([
      CONFORMANCE_CLI,
      "--surface",
      "a",
      "--base-url",
      writ.surfaceA,
      "--api-key",
      "not-the-key-of-this-server",
      "--only",
      "a.runtime.",
      "--report",
      reportPath,
    ]);
    expect(ran.code).toBe(1);
    expect(ran.stdout).toContain(
      "a.runtime.manifest (section 2.11): the runtime manifest has version, runtimeHash, capabilities, supportedSchemaVersions and startedAt",
    );
    expect(ran.stdout).toContain('    step 0: status: expected 200, got 401 (body {"error":"Unauthorized"})');
    expect(ran.stdout).toContain("FAIL: 4 of 4 cases failed");
    const report = await reportAt(reportPath);
    expect(report.passed).toBe(false);
    expect(report.cases.find((c) => c.id === "a.runtime.manifest")!.failures).toEqual([
      { step: 0, message: 'status: expected 200, got 401 (body {"error":"Unauthorized"})' },
    ]);
  });
});

describe("bad arguments are exit 2 with one line", () => {
  it.each([
    [[], "writ-conformance: --surface is required: `a` or `b`"],
    [["--surface", "c"], "writ-conformance: --surface must be `a` or `b`, not `c`"],
    [["--surface", "a"], "writ-conformance: --base-url is required, e.g. http://127.0.0.1:8080"],
    [["--surface", "a", "--base-url", "http://127.0.0.1:1"], "writ-conformance: --api-key is required: the server's Bearer key"],
    [["--surface", "a", "--bogus"], "writ-conformance: unknown option `--bogus` (see `writ-conformance --help`)"],
    [
      ["--surface", "a", "--base-url", "localhost:8080", "--api-key", "k"],
      "writ-conformance: the base URL `localhost:8080` must be http or https",
    ],
    [
      ["--surface", "a", "--base-url", "http://127.0.0.1:8080", "--api-key", "k", "--public-key", "/nonexistent.pub"],
      "writ-conformance: cannot read the public key `/nonexistent.pub`: ENOENT",
    ],
    [
      ["--surface", "a", "--base-url", "http://127.0.0.1:8080", "--api-key", "k", "--only", "z."],
      "writ-conformance: no case of surface a matches the filter `z.`",
    ],
  ])("%j", async (args, line) => {
    const ran = await spawnCli([CONFORMANCE_CLI, ...args]);
    expect({ code: ran.code, stderr: ran.stderr, stdout: ran.stdout }).toEqual({ code: 2, stderr: `${line}\n`, stdout: "" });
  });

  it("an unreachable base URL", async () => {
    const ran = await spawnCli([WRIT_CLI, "conformance", "--surface", "a", "--base-url", "http://127.0.0.1:1", "--api-key", "k"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/^writ conformance: cannot reach `http:\/\/127\.0\.0\.1:1`: connect ECONNREFUSED 127\.0\.0\.1:1\n$/);
  });

  it("a small-order public key is refused before anything runs", async () => {
    const identity = Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(`01${"00".repeat(31)}`, "hex")]);
    const pem = `-----BEGIN PUBLIC KEY-----\n${identity.toString("base64")}\n-----END PUBLIC KEY-----\n`;
    const path = join(fixtures.dir, "identity.pub");
    await writeFile(path, pem);
    const ran = await spawnCli([
      CONFORMANCE_CLI,
      "--surface",
      "a",
      "--base-url",
      writ.surfaceA,
      "--api-key",
      API_KEY,
      "--public-key",
      path,
    ]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toBe(
      "writ-conformance: the public key is refused: small-order point (KEY_SMALL_ORDER): it would accept forged signatures\n",
    );
  });

  it("--help prints the usage (exit 0); writ help lists the command", async () => {
    const ran = await spawnCli([CONFORMANCE_CLI, "--help"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^usage: writ-conformance --surface a\|b --base-url URL --api-key KEY \[options\]/);
    const help = await spawnCli([WRIT_CLI, "help"]);
    expect(help.stdout).toContain(
      "  conformance         run the conformance suite against a running server over HTTP (docs/conformance.md)",
    );
  });
});
