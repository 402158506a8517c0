/**
 * The built sidecar as an operator runs it (`node sidecar/dist/main.js`): configuration errors, development-mode
 * keys, the `execute:failure` log line, no API key in any log, and a graceful shutdown that finishes the request in
 * flight and keeps what it acknowledged.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { listeningUrl, logLines } from "../support/built-sidecar.js";
import { fixturePoliciesRoot, TRANSFER_SIGNALS } from "../support/policies.js";

const MAIN = fileURLToPath(new URL("../../dist/main.js", import.meta.url));
const API_KEY = "operations-api-key-0123456789";

interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "writ-sidecar-ops-"));
  dirs.push(dir);
  return dir;
}

function run(
  env: Record<string, string>,
  args: string[] = [],
): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exit };
}

async function start(env: Record<string, string>, args: string[] = []): Promise<Running> {
  const r = run({ SERVICE_PORT: "0", SERVICE_B_PORT: "off", ...env }, args);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const url = listeningUrl(r.output(), "A");
      if (url !== null) {
        clearInterval(timer);
        resolve(url);
      }
    }, 20);
    void r.exit.then((code) => {
      clearInterval(timer);
      reject(new Error(`sidecar exited with ${code}:\n${r.output()}`));
    });
  });
  return { child: r.child, url, output: r.output };
}

function evaluate(url: string, executionId: string, signals: object = TRANSFER_SIGNALS.approved, key = API_KEY) {
  return fetch(`${url}/evaluate`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ executionId, policyId: "conformance.transfer", policyVersion: "1.0.0", verifiedSignals: signals }),
  });
}

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm run test:e2e does)`);
});

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe("writ-sidecar", () => {
  it("refuses a bad configuration with one fatal log line and exit code 2", async () => {
    const r = run({ SERVICE_API_KEY: API_KEY, SERVICE_PORT: "eighty" });
    expect(await r.exit).toBe(2);
    expect(logLines(r.output())).toEqual([
      expect.objectContaining({
        level: "fatal",
        code: "CONFIG_INVALID",
        msg: "SERVICE_PORT must be a port number from 0 to 65535 or `off`, not `eighty`",
      }),
    ]);
    const missing = run({});
    expect(await missing.exit).toBe(2);
    expect(logLines(missing.output())).toEqual([
      expect.objectContaining({ level: "fatal", msg: expect.stringMatching(/^SERVICE_API_KEY is not set/) }),
    ]);
  });

  it("answers --version, --help and a wrong argument in plain text, like any command", async () => {
    const version = run({}, ["--version"]);
    expect(await version.exit).toBe(0);
    expect(version.output()).toMatch(/^\d+\.\d+\.\d+\n$/);
    const wrong = run({}, ["--verbose"]);
    expect(await wrong.exit).toBe(2);
    expect(wrong.output()).toMatch(/^writ-sidecar: unknown argument `--verbose`\nusage: writ-sidecar/);
  });

  it("in development mode generates an API key and a signing key once, private to the user", async () => {
    const cwd = await tempDir();
    const env = { SERVICE_DATA_DIR: join(cwd, "data"), SERVICE_POLICIES_ROOT: await fixturePoliciesRoot(), SERVICE_LOG_LEVEL: "warn" };
    const first = await start(env, ["--dev"]);
    // Shown once, as a field of its line, whatever the log level.
    const printed = logLines(first.output()).filter((line) => line["apiKey"] !== undefined);
    expect(printed).toEqual([expect.objectContaining({ level: "info", msg: expect.stringMatching(/^generated an API key, kept in /) })]);
    const { path: keyFile, apiKey } = printed[0] as unknown as { path: string; apiKey: string };
    expect((await stat(keyFile!)).mode & 0o777).toBe(0o600);
    expect((await stat(join(cwd, "data", "signing.key"))).mode & 0o777).toBe(0o600);
    expect((await evaluate(first.url, "dev-1", TRANSFER_SIGNALS.approved, apiKey)).status).toBe(200);
    first.child.kill("SIGTERM");
    await new Promise((resolve) => first.child.once("exit", resolve));

    const second = await start(env, ["--dev"]);
    expect(second.output()).not.toContain(apiKey);
    expect(second.output()).toContain("API key read from");
    // Same keys: the first start's decision is still consumed.
    expect((await evaluate(second.url, "dev-1", TRANSFER_SIGNALS.approved, apiKey)).status).toBe(422);
  });

  it("takes a data dir whose name has a dot for a directory", async () => {
    const dir = join(await tempDir(), "writ.v2");
    const s = await start({
      SERVICE_API_KEY: API_KEY,
      SERVICE_DATA_DIR: dir,
      SERVICE_POLICIES_ROOT: await fixturePoliciesRoot(),
      SERVICE_LOG_LEVEL: "warn",
    });
    expect((await evaluate(s.url, "dotted-1")).status).toBe(200);
    expect((await stat(dir)).isDirectory()).toBe(true);
    expect((await stat(join(dir, "data.mdb"))).isFile()).toBe(true);
  });

  it("logs a failed execution as execute:failure with its error, and never logs the API key", async () => {
    const dir = await tempDir();
    const s = await start({
      SERVICE_API_KEY: API_KEY,
      SERVICE_DATA_DIR: dir,
      SERVICE_POLICIES_ROOT: await fixturePoliciesRoot(),
      SERVICE_LOG_LEVEL: "info",
    });
    expect((await evaluate(s.url, "log-1")).status).toBe(200);
    expect((await evaluate(s.url, "log-1")).status).toBe(422);
    expect((await evaluate(s.url, "log-2", TRANSFER_SIGNALS.approved, `${API_KEY}-wrong`)).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const failure = logLines(s.output()).find((l) => l.msg === "execute:failure");
    expect(failure).toMatchObject({
      error: "[INV-013@replay] execution already consumed: use a new executionId",
      code: "INV-013",
      status: 422,
      executionId: "log-1",
      policyId: "conformance.transfer",
      policyVersion: "1.0.0",
    });
    expect(s.output()).not.toContain(API_KEY);
  });

  it("on SIGTERM finishes the request in flight, answers it, and keeps it after a restart", async () => {
    const dir = await tempDir();
    const env = {
      SERVICE_API_KEY: API_KEY,
      SERVICE_DATA_DIR: dir,
      SERVICE_POLICIES_ROOT: await fixturePoliciesRoot(),
      SERVICE_LOG_LEVEL: "warn",
    };
    const s = await start(env);
    const { hostname, port } = new URL(s.url);
    const body = JSON.stringify({
      executionId: "graceful-1",
      policyId: "conformance.transfer",
      policyVersion: "1.0.0",
      verifiedSignals: TRANSFER_SIGNALS.approved,
    });
    // Headers and part of the body now, SIGTERM, then the rest: the request is in flight when shutdown begins.
    const socket = connect(Number(port), hostname);
    let answer = "";
    socket.on("data", (c: Buffer) => (answer += c.toString()));
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(
      `POST /evaluate HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${API_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    socket.write(body.slice(0, 20));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const exited = new Promise<number | null>((resolve) => s.child.once("exit", (code) => resolve(code)));
    s.child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The rest of the body without closing our side: a client that half-closes has abandoned its answer.
    socket.write(body.slice(20));
    expect(await exited).toBe(0);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('"status":"approved"');

    const again = await start(env);
    expect((await evaluate(again.url, "graceful-1")).status).toBe(422);
  });
});
