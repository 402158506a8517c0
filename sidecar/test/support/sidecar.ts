/**
 * A real listening sidecar for end-to-end tests: fresh data dir, fixture policies, random port. Every answer to `call`
 * is checked against Surface A's OpenAPI document when the sidecar stops (support/openapi.ts).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, startSidecar, type RunningSidecar } from "@writ/sidecar";
import { assertDocumented, checkerOf, type RecordedAnswer } from "./openapi.js";
import { fixturePoliciesRoot } from "./policies.js";

export const API_KEY = "test-api-key-0123456789abcdef";

export interface TestSidecarOptions {
  /** Also serve Surface B, on a random port: its URL is `urls.b`. */
  readonly surfaceB?: boolean;
  /** Start on this data dir (a stopped sidecar's, to test a restart) instead of a fresh one. */
  readonly dataDir?: string;
}

/** An answer as `call` reads it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read answers of many shapes; each asserts what it reads
type TestAnswer = { status: number; body: any; headers: Headers };

export interface TestSidecar {
  /** Surface A's URL. */
  readonly url: string;
  readonly urls: RunningSidecar["urls"];
  readonly dataDir: string;
  readonly sidecar: RunningSidecar;
  /** fetch against the sidecar with the API key and a JSON body. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<TestAnswer>;
  /** Shuts the sidecar down and keeps its data dir; then checks the answers `call` had. */
  stop(): Promise<void>;
  /** Shuts it down and removes its data dir; then checks the answers `call` had. */
  close(): Promise<void>;
}

export async function startTestSidecar(
  env: Readonly<Record<string, string | undefined>> = {},
  options: TestSidecarOptions = {},
): Promise<TestSidecar> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "writ-sidecar-data-")));
  const config = loadConfig({
    SERVICE_API_KEY: API_KEY,
    SERVICE_POLICIES_ROOT: await fixturePoliciesRoot(),
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: "0",
    SERVICE_B_PORT: options.surfaceB ? "0" : "off",
    SERVICE_LOG_LEVEL: "silent",
    ...env,
  });
  const sidecar = await startSidecar(config);
  const url = sidecar.urls.a!;
  const answers: RecordedAnswer[] = [];
  const checkAnswers = () => assertDocumented(checkerOf("surface-a"), answers.splice(0));
  return {
    url,
    urls: sidecar.urls,
    dataDir,
    sidecar,
    async call(method, path, body, headers = {}) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${API_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      });
      const text = await response.text();
      answers.push({ method, path, status: response.status, contentType: response.headers.get("content-type") ?? "", text });
      return { status: response.status, body: text === "" ? null : JSON.parse(text), headers: response.headers };
    },
    async stop() {
      await sidecar.close();
      checkAnswers();
    },
    async close() {
      await sidecar.close();
      await rm(dataDir, { recursive: true, force: true });
      checkAnswers();
    },
  };
}
