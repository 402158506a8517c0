/**
 * The Cerbos PDP as the sidecar benchmark's peer: a real `cerbos server` process (the binary of the npm package
 * @cerbos/cerbos-linux-x64) serving payments.transfer@1.2.0 translated by cerbos-policy.ts, on HTTP bound to
 * 127.0.0.1, and a self-check that it decides the test file's signal sets as writ does.
 *
 * Configured for Cerbos's best showing on a decision-only path: audit, metrics, the API explorer and telemetry
 * off, logging at error level, policies read once from disk (no watcher). gRPC cannot be switched off, and the
 * HTTP API is a gateway that relays each call to it; it listens on a unix socket in the temp dir, so there is no
 * second port to find (the relay measured as fast as over loopback TCP, within noise).
 */
import { execFile, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { access, chmod, constants, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer, type AddressInfo } from "node:net";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { CERBOS_ACTION, CERBOS_KIND, cerbosPolicyFiles } from "./cerbos-policy.js";
import type { PolicyCases, Signals } from "./policy-cases.js";
import { pinned } from "./pinning.js";

const PACKAGE = "@cerbos/cerbos-linux-x64";
const COMPILE_TIMEOUT_MS = 30_000;
const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;
const OUTPUT_TAIL_BYTES = 8_192;

export interface Cerbos {
  /** Base URL, e.g. http://127.0.0.1:41234. */
  readonly url: string;
  /** The endpoint a check is POSTed to (`/api/check/resources`), with `checkBody` as JSON. */
  readonly checkUrl: string;
  /** The version of the Cerbos package, for the report. */
  readonly version: string;
  /** A check request for one signal set: one resource of kind payments.transfer, one action, the set as attributes. */
  checkBody(signals: Signals, requestId: string): object;
  /** SIGTERM, SIGKILL after a timeout, then the temp dir is removed. Idempotent. */
  stop(): Promise<void>;
}

/** Where npm put the binary (the package's `main`), made executable if the install did not keep the mode. */
async function cerbosBinary(): Promise<{ bin: string; version: string }> {
  if (platform() !== "linux" || arch() !== "x64")
    throw new Error(`the Cerbos peer runs ${PACKAGE}, which is for linux x64; this is ${platform()} ${arch()}`);
  const require = createRequire(import.meta.url);
  let bin: string;
  try {
    bin = require.resolve(PACKAGE);
  } catch (e) {
    throw new Error(`${PACKAGE} is not installed (it is a devDependency: run npm install)`, { cause: e });
  }
  const { version } = require(`${PACKAGE}/package.json`) as { version: string };
  try {
    await access(bin, constants.X_OK);
  } catch {
    await chmod(bin, 0o755);
  }
  return { bin, version };
}

/** A port the OS considers free now; Cerbos binds it a moment later (a failure to bind shows in its output). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Writes the policy directory and the config into `dir`; returns their paths. */
async function writeCerbosFiles(dir: string, port: number): Promise<{ config: string; policies: string }> {
  const policies = join(dir, "policies");
  for (const [path, text] of await cerbosPolicyFiles()) {
    await mkdir(dirname(join(policies, path)), { recursive: true });
    await writeFile(join(policies, path), text);
  }
  // JSON is YAML, so the config needs no YAML writer either.
  const config = {
    server: {
      httpListenAddr: `127.0.0.1:${port}`,
      grpcListenAddr: `unix:${join(dir, "grpc.sock")}`,
      metricsEnabled: false,
      apiExplorerEnabled: false,
    },
    storage: { driver: "disk", disk: { directory: policies, watchForChanges: false } },
    schema: { enforcement: "reject" },
    audit: { enabled: false },
    telemetry: { disabled: true },
  };
  const path = join(dir, "config.yaml");
  await writeFile(path, JSON.stringify(config, null, 2));
  return { config: path, policies };
}

/**
 * `cerbos compile` first: a server with a malformed policy or schema still starts and answers DENY with errors,
 * so a malformed translation is reported here, as Cerbos's own diagnostics (a well-formed but wrong one is what
 * `checkAgreement` catches: CEL on attributes is only type-checked at evaluation, and an erring rule is skipped).
 */
async function compilePolicies(bin: string, policies: string): Promise<void> {
  try {
    await promisify(execFile)(bin, ["compile", "--skip-tests", policies], { timeout: COMPILE_TIMEOUT_MS });
  } catch (e) {
    const { stdout = "", stderr = "", killed = false } = e as { stdout?: string; stderr?: string; killed?: boolean };
    if (killed) throw new Error(`cerbos compile did not finish within ${COMPILE_TIMEOUT_MS} ms`, { cause: e });
    throw new Error(`cerbos compile rejects the translated policy:\n${stdout}${stderr}`.trimEnd(), { cause: e });
  }
}

/** A running child process: its output's tail, how it ended, and a graceful stop. */
interface Process {
  readonly exited: Promise<string>;
  output(): string;
  /** SIGTERM; SIGKILL if it has not exited after STOP_TIMEOUT_MS. Resolves once it has exited. */
  terminate(): Promise<void>;
  /** SIGKILL, synchronously: for a process `exit` handler, where nothing can be awaited. */
  kill(): void;
}

function spawnProcess(bin: string, args: readonly string[]): Process {
  const [command, commandArgs] = pinned(bin, args);
  const child = spawn(command, commandArgs, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString("utf8")).slice(-OUTPUT_TAIL_BYTES);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  let running = true;
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`));
    child.once("error", (e) => resolve(e.message)); // e.g. the binary cannot be executed
  }).finally(() => (running = false));
  return {
    exited,
    output: () => output,
    terminate: async () => {
      if (!running) return;
      child.kill("SIGTERM");
      const late = await Promise.race([exited.then(() => false), sleep(STOP_TIMEOUT_MS, true, { ref: false })]);
      if (late) child.kill("SIGKILL");
      await exited;
    },
    kill: () => {
      if (running) child.kill("SIGKILL");
    },
  };
}

/** Starts Cerbos and waits until its health endpoint reports SERVING. */
export async function startCerbos(): Promise<Cerbos> {
  const { bin, version } = await cerbosBinary();
  const dir = await mkdtemp(join(tmpdir(), "writ-bench-cerbos-"));
  let server: Process | undefined;
  // Last resort if the script ends without `stop` (process.exit, an uncaught exception): no orphan, no temp dir.
  const onExit = (): void => {
    server?.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await server?.terminate();
      await rm(dir, { recursive: true, force: true });
      process.off("exit", onExit);
    })());

  try {
    const port = await freePort();
    const { config, policies } = await writeCerbosFiles(dir, port);
    await compilePolicies(bin, policies);
    server = spawnProcess(bin, ["server", `--config=${config}`, "--log-level=error"]);
    const url = `http://127.0.0.1:${port}`;
    await waitReady(url, server);
    return {
      url,
      checkUrl: `${url}/api/check/resources`,
      version,
      checkBody: (signals, requestId) => ({
        requestId,
        principal: { id: "customer-1", roles: ["customer"] },
        resources: [{ actions: [CERBOS_ACTION], resource: { kind: CERBOS_KIND, id: requestId, attr: signals } }],
      }),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Polls `/_cerbos/health` until it answers SERVING; fails early if the process exits, with its output. */
async function waitReady(url: string, server: Process): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let exit: string | undefined;
  void server.exited.then((how) => (exit = how));
  let last = "no answer yet";
  while (Date.now() < deadline) {
    if (exit !== undefined) throw new Error(`Cerbos exited (${exit}) before it was ready; its output:\n${server.output() || "(none)"}`);
    try {
      const res = await fetch(`${url}/_cerbos/health`, { signal: AbortSignal.timeout(1_000) });
      const text = await res.text();
      if (res.ok && text.includes("SERVING")) return;
      last = `HTTP ${res.status} ${text.slice(0, 200)}`;
    } catch (e) {
      last = e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e);
    }
    await sleep(50);
  }
  throw new Error(
    `Cerbos was not ready within ${READY_TIMEOUT_MS} ms at ${url} (last health check: ${last}); its output:\n${server.output() || "(none)"}`,
  );
}

interface CheckResponse {
  readonly results?: readonly {
    readonly actions?: Readonly<Record<string, string>>;
    readonly validationErrors?: readonly { readonly path?: string; readonly message?: string }[];
  }[];
}

async function check(cerbos: Cerbos, signals: Signals, requestId: string): Promise<{ effect: string; errors: string[] }> {
  const res = await fetch(cerbos.checkUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(cerbos.checkBody(signals, requestId)),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`Cerbos answered HTTP ${res.status} to check ${requestId}: ${text.slice(0, 500)}`);
  const result = (JSON.parse(text) as CheckResponse).results?.[0];
  return {
    effect: result?.actions?.[CERBOS_ACTION] ?? `no effect in ${text.slice(0, 200)}`,
    errors: (result?.validationErrors ?? []).map((v) => `${v.path ?? "/"}: ${v.message ?? "?"}`),
  };
}

/**
 * Sends every signal set of the test file to Cerbos and throws, listing every difference, unless Cerbos allows
 * exactly the valid sets writ approves, and refuses each invalid set with validation errors (which shows the
 * schema is enforced on the path the load measures).
 */
export async function checkAgreement(cerbos: Cerbos, cases: PolicyCases): Promise<{ allowed: number; denied: number; refused: number }> {
  const problems: string[] = [];
  let allowed = 0;
  for (const [i, c] of cases.valid.entries()) {
    const { effect, errors } = await check(cerbos, c.signals, `agreement-valid-${i}`);
    if (errors.length > 0) problems.push(`"${c.name}": Cerbos refuses a valid set: ${errors.join("; ")}`);
    else if ((effect === "EFFECT_ALLOW") !== (c.verdict === "approve")) problems.push(`"${c.name}": writ ${c.verdict}, Cerbos ${effect}`);
    if (effect === "EFFECT_ALLOW") allowed++;
  }
  for (const [i, c] of cases.invalid.entries()) {
    const { effect, errors } = await check(cerbos, c.signals, `agreement-invalid-${i}`);
    if (effect !== "EFFECT_DENY" || errors.length === 0) {
      problems.push(`"${c.name}": writ refuses it (${c.codes.join(", ")}), Cerbos ${effect} with ${errors.length} validation errors`);
    }
  }
  if (problems.length > 0)
    throw new Error(`DISAGREEMENT between writ and Cerbos on ${problems.length} signal sets:\n  ${problems.join("\n  ")}`);
  return { allowed, denied: cases.valid.length - allowed, refused: cases.invalid.length };
}
