/**
 * The writ half of the sidecar benchmark: the shipped payments.transfer@1.2.0 compiled and signed with a fresh key,
 * and the built sidecar (`sidecar/dist/main.js`) started as its own process, as an operator runs it: bundle
 * signatures required, durable LMDB replay store and audit on, in a fresh data dir; Surface A on 127.0.0.1.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "@writ/compiler";
import { generateSigningKeyPair, loadSigningKeyPem } from "@writ/runtime";
import pg from "pg";
import { POLICY_SOURCE, type Signals, type ValidCase } from "./policy-cases.js";
import { pinned } from "./pinning.js";

const MAIN = fileURLToPath(new URL("../../sidecar/dist/main.js", import.meta.url));
const API_KEY = "bench-api-key-0123456789abcdef";
const START_TIMEOUT_MS = 15_000;

export interface Writ {
  readonly url: string;
  readonly evaluateUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  evaluateBody(signals: Signals, executionId: string): object;
  /** The sidecar process's id (for its CPU time: load.ts `processCpuSeconds`); with `processes`, their supervisor's. */
  readonly pid: number;
  /** The processes whose main thread serves requests: `pid`, or with `processes` the supervisor's children. */
  readonly loops: readonly number[];
  stop(): Promise<void>;
}

/**
 * The policy at `source` (by default the shipped payments.transfer@1.2.0), compiled and signed with a fresh key, as a
 * policies root under `dir`; the key's public half in `dir/bundle-key.pub`.
 */
export async function policiesRoot(dir: string, ...sources: string[]): Promise<string> {
  const pair = generateSigningKeyPair();
  const root = join(dir, "policies");
  for (const source of sources.length > 0 ? sources : [POLICY_SOURCE]) {
    const result = compile(source, await readFile(source, "utf8"), { signingKey: loadSigningKeyPem(pair.privateKeyPem) });
    if (!result.valid || !result.bundle) throw new Error(`${source} does not compile`);
    const bundleDir = join(root, result.bundle.policyId, result.bundle.version);
    await mkdir(bundleDir, { recursive: true });
    for (const [name, bytes] of result.bundle.files) await writeFile(join(bundleDir, name), bytes);
  }
  await writeFile(join(dir, "bundle-key.pub"), pair.publicKeyPem);
  return root;
}

/**
 * Resolves with the Surface A URL the sidecar logs once it listens (of `processes` above 1, once its supervisor says
 * all serve); rejects with its output if it exits first.
 */
function listening(child: ChildProcess, processes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`writ sidecar did not start in ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      // A JSON log line now, a plain line before (a baseline built from an earlier commit: bench/sidecar/overhead.ts).
      const match = /Surface A listening on (http:\/\/[^"\s]+)/.exec(output);
      if (match && (processes === 1 || output.includes(`${processes} processes serving`))) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`writ sidecar exited with ${code} before listening:\n${output}`));
    });
  });
}

export interface WritOptions {
  /** More sidecar settings, for experiments (e.g. `SERVICE_AUDIT: "off"`); the benchmark itself passes none. */
  readonly env?: Readonly<Record<string, string>>;
  /** Node options for the sidecar process, e.g. `--cpu-prof`. */
  readonly nodeArgs?: readonly string[];
  /** Another build of the sidecar (`…/sidecar/dist/main.js`); by default this repository's. */
  readonly main?: string;
  /** More than 1: that many sidecar processes on one port, the sidecar's own (SERVICE_PROCESSES), on one data dir or database. */
  readonly processes?: number;
  /** A PostgreSQL server's URL: the sidecar runs on a database of its own there (made, and dropped by `stop`). */
  readonly postgres?: string | null;
}

/** A new database's name on the PostgreSQL server at `server`, and its URL. */
function databaseOn(server: string): { readonly server: string; readonly name: string; readonly url: string } {
  const name = `writ_bench_${randomBytes(6).toString("hex")}`;
  const url = new URL(server);
  url.pathname = `/${name}`;
  return { server, name, url: url.toString() };
}

/** Runs `statement` on the PostgreSQL server at `url`. */
async function onServer(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function startWrit(options: WritOptions = {}): Promise<Writ> {
  const main = options.main ?? MAIN;
  if (
    !(await readFile(main).then(
      () => true,
      () => false,
    ))
  )
    throw new Error(`${main} is missing: run \`npm run build\` first`);
  const dir = await mkdtemp(join(tmpdir(), "writ-bench-sidecar-"));
  const processes = options.processes ?? 1;
  const database = options.postgres == null ? null : databaseOn(options.postgres);
  if (database !== null) await onServer(database.server, `CREATE DATABASE ${database.name}`);
  const storage = database === null ? {} : { SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: database.url };
  const [command, commandArgs] = pinned(process.execPath, [...(options.nodeArgs ?? []), main]);
  const child = spawn(command, commandArgs, {
    env: {
      PATH: process.env["PATH"] ?? "",
      SERVICE_API_KEY: API_KEY,
      SERVICE_POLICIES_ROOT: await policiesRoot(dir),
      SERVICE_BUNDLE_KEYS: join(dir, "bundle-key.pub"),
      SERVICE_DATA_DIR: join(dir, "data"),
      SERVICE_PORT: "0",
      SERVICE_B_PORT: "off",
      SERVICE_LOG_LEVEL: "warn",
      ...storage,
      ...(processes > 1 ? { SERVICE_PROCESSES: String(processes) } : {}),
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stopped: Promise<void> | null = null;
  const stop = () =>
    (stopped ??= (async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
      if (database !== null) await onServer(database.server, `DROP DATABASE IF EXISTS ${database.name} WITH (FORCE)`);
    })());
  try {
    const url = await listening(child, processes);
    return {
      url,
      evaluateUrl: `${url}/evaluate`,
      headers: { "content-type": "application/json", authorization: `Bearer ${API_KEY}` },
      evaluateBody: (signals, executionId) => ({
        executionId,
        policyId: "payments.transfer",
        policyVersion: "1.2.0",
        verifiedSignals: signals,
      }),
      pid: child.pid!,
      loops: processes > 1 ? await children(child.pid!, processes) : [child.pid!],
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** The `count` child processes of `pid`, once it has started them all (Linux `/proc/<pid>/task/<pid>/children`). */
async function children(pid: number, count: number): Promise<number[]> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const pids = (await readFile(`/proc/${pid}/task/${pid}/children`, "utf8")).trim().split(/\s+/).filter(Boolean).map(Number);
    if (pids.length >= count) return pids;
    if (Date.now() > deadline) throw new Error(`${pid} started ${pids.length} of its ${count} sidecar processes`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * writ must decide each case as the policy's test file says (approve answers `approved`, escalate `pending_override`,
 * reject `rejected`) before anything is timed. Each request uses the executionId `<idPrefix>-<i>`.
 */
export async function checkWrit(writ: Writ, cases: readonly ValidCase[], idPrefix: string): Promise<void> {
  const expected = { approve: "approved", escalate: "pending_override", reject: "rejected" } as const;
  for (const [i, c] of cases.entries()) {
    const response = await fetch(writ.evaluateUrl, {
      method: "POST",
      headers: writ.headers,
      body: JSON.stringify(writ.evaluateBody(c.signals, `${idPrefix}-${i}`)),
    });
    const body = (await response.json()) as { status?: string };
    if (response.status !== 200 || body.status !== expected[c.verdict]) {
      throw new Error(
        `writ at ${writ.url} answers ${response.status} ${JSON.stringify(body).slice(0, 200)} for \`${c.name}\`, expected ${expected[c.verdict]}`,
      );
    }
  }
}
