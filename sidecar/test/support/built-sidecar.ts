/**
 * The BUILT sidecar (`node sidecar/dist/main.js`) in its own process, for tests that must kill it or load it as
 * a client would: environment configuration, readiness from its `Surface A listening on` log line, its JSON log lines,
 * and a keep-alive HTTP client on node:http (undici is not a dependency of this repository).
 *
 * Every child started here is remembered until it has exited: `killAllBuiltSidecars()` (call it from afterEach or
 * afterAll, which vitest also runs after a test timeout) SIGKILLs the ones still alive, and so does a process
 * `exit` handler, so no sidecar outlives the test worker.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { fileURLToPath } from "node:url";

export const SIDECAR_MAIN = fileURLToPath(new URL("../../dist/main.js", import.meta.url));
const RUNTIME_DIST = fileURLToPath(new URL("../../../runtime/dist/index.js", import.meta.url));
const REPO = fileURLToPath(new URL("../../../", import.meta.url));

/** @throws Error naming the missing file and the command that builds it. */
export function assertSidecarBuilt(): void {
  for (const file of [SIDECAR_MAIN, RUNTIME_DIST]) {
    if (!existsSync(file)) {
      throw new Error(
        `${file} is missing: these tests run the built sidecar; run \`npm run build\` at the repository root first (root \`npm test\` does)`,
      );
    }
  }
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface BuiltSidecar {
  readonly child: ChildProcess;
  /** `http://host:port` of Surface A. */
  readonly url: string;
  /** The last 64 KB of stdout and stderr, for failure messages. */
  output(): string;
  /** All of stdout and of stderr so far; only with `keepAll` (a busy sidecar writes a lot). */
  all(): { readonly stdout: string; readonly stderr: string };
  /** Resolves when the process has exited and its stdio is closed. */
  readonly closed: Promise<Exit>;
  /** SIGKILL (idempotent), resolving with the exit. */
  kill(): Promise<Exit>;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function isAlive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** SIGKILLs every sidecar started by this module that is still running, and waits for them to exit. */
export async function killAllBuiltSidecars(): Promise<void> {
  const waits: Promise<unknown>[] = [];
  for (const child of live) {
    if (isAlive(child)) {
      waits.push(new Promise((resolve) => child.once("close", resolve)));
      child.kill("SIGKILL");
    }
  }
  await Promise.all(waits);
}

const OUTPUT_KEEP = 64 * 1024;

/** One line of the sidecar's log (pino JSON). */
export interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** Every complete line of `output` as JSON; throws, naming the line, when one is not JSON. */
export function logLines(output: string): LogLine[] {
  const complete = output.slice(0, output.lastIndexOf("\n") + 1);
  return complete
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
    });
}

/** The URL of the surface's `Surface A listening on http://…` line in `output`, or null before it. */
export function listeningUrl(output: string, surface: "A" | "B"): string | null {
  return new RegExp(`"msg":"Surface ${surface} listening on (http://[^"]+)"`).exec(output)?.[1] ?? null;
}

/**
 * Starts `node sidecar/dist/main.js` with exactly `env` (plus PATH) and resolves once Surface A listens.
 * `keepAll`: keep all of stdout and stderr for `all()`.
 * @throws Error with the process output when it exits or stays silent for `readyTimeoutMs` first: a hang, not a slow
 *   start (with two busy loops beside the suite, a start that is refused took over 15 s to say so).
 */
export async function startBuiltSidecar(
  env: Readonly<Record<string, string>>,
  readyTimeoutMs = 45_000,
  keepAll = false,
): Promise<BuiltSidecar> {
  assertSidecarBuilt();
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const child of live) if (isAlive(child)) child.kill("SIGKILL");
    });
  }
  const child = spawn(process.execPath, [SIDECAR_MAIN], {
    cwd: REPO,
    env: { PATH: process.env["PATH"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  let out = "";
  const keep = (chunk: string): void => {
    out += chunk;
    if (out.length > 2 * OUTPUT_KEEP) out = out.slice(-OUTPUT_KEEP);
  };
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const everything = { stdout: "", stderr: "" };
  if (keepAll) {
    child.stdout!.on("data", (chunk: string) => (everything.stdout += chunk));
    child.stderr!.on("data", (chunk: string) => (everything.stderr += chunk));
  }
  const all = (): { readonly stdout: string; readonly stderr: string } => {
    if (!keepAll) throw new Error("all() needs startBuiltSidecar(..., keepAll = true)");
    return { ...everything };
  };
  const closed = new Promise<Exit>((resolve) => {
    child.once("close", (code: number | null, signal: NodeJS.Signals | null) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  const output = (): string => out.slice(-OUTPUT_KEEP);
  const kill = async (): Promise<Exit> => {
    if (isAlive(child)) child.kill("SIGKILL");
    return closed;
  };

  let timer: NodeJS.Timeout | undefined;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (): void => {
        const url = listeningUrl(out, "A");
        if (url !== null) resolve(url);
      };
      child.stdout!.on("data", onData);
      void closed.then((exit) =>
        reject(new Error(`the sidecar exited (code ${exit.code}, signal ${exit.signal}) before listening:\n${output()}`)),
      );
      child.once("error", reject);
      timer = setTimeout(() => reject(new Error(`the sidecar did not listen within ${readyTimeoutMs} ms:\n${output()}`)), readyTimeoutMs);
    });
    return { child, url, output, all, closed, kill };
  } catch (e) {
    await kill();
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

export interface HttpAnswer {
  readonly status: number;
  /** The body as received (UTF-8). */
  readonly text: string;
}

/** A keep-alive client over at most `connections` sockets. Network failures reject, as with fetch. */
export class KeepAliveClient {
  readonly agent: Agent;
  readonly #url: URL;
  readonly #authorization: string;

  constructor(url: string, apiKey: string, connections: number) {
    this.#url = new URL(url);
    this.#authorization = `Bearer ${apiKey}`;
    this.agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  }

  request(method: string, path: string, body?: string): Promise<HttpAnswer> {
    return new Promise<HttpAnswer>((resolve, reject) => {
      const headers: Record<string, string | number> = { authorization: this.#authorization };
      if (body !== undefined) {
        headers["content-type"] = "application/json";
        headers["content-length"] = Buffer.byteLength(body);
      }
      const req = httpRequest({ agent: this.agent, hostname: this.#url.hostname, port: this.#url.port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.once("error", reject);
        // `aborted`: the connection died after the headers; such an answer was never fully received.
        res.once("aborted", () => reject(new Error(`${method} ${path}: response aborted`)));
        res.once("end", () => {
          if (res.complete) resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
          else reject(new Error(`${method} ${path}: incomplete response`));
        });
      });
      req.once("error", reject);
      req.end(body);
    });
  }

  /** Like `request`, with the body parsed as JSON (null for an empty body). */
  async json(method: string, path: string, body?: unknown): Promise<{ readonly status: number; readonly body: unknown }> {
    const answer = await this.request(method, path, body === undefined ? undefined : JSON.stringify(body));
    return { status: answer.status, body: answer.text === "" ? null : (JSON.parse(answer.text) as unknown) };
  }

  close(): void {
    this.agent.destroy();
  }
}
