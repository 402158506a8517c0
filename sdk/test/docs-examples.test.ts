/**
 * The worked examples of docs/sdk.md run as written: each code block marked `<!-- example: NAME -->` is written to a
 * file and imported (so `@writ/sdk` resolves to this package), with its settings in the environment. The client
 * example runs against a real listening sidecar, and the audit trail shows that it went through the whole workflow.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSigningKeyPair } from "@writ/runtime";
import { API_KEY, fixturePoliciesRoot, startSidecar, type Running } from "./support.js";

const DOC = new URL("../../docs/sdk.md", import.meta.url);
const TSCONFIG = fileURLToPath(new URL("../../tsconfig.json", import.meta.url));
const MAX_LINES = 30;

function examples(markdown: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of markdown.matchAll(/<!-- example: ([a-z-]+) -->\n```ts\n([\s\S]*?)```/g)) found.set(match[1]!, match[2]!);
  return found;
}

let code: Map<string, string>;
let dir: string;
let s: Running;

beforeAll(async () => {
  code = examples(await readFile(DOC, "utf8"));
  dir = await mkdtemp(join(tmpdir(), "writ-sdk-docs-"));
  for (const [name, text] of code) await writeFile(join(dir, `${name}.ts`), text);
  s = await startSidecar();
});
afterAll(async () => {
  await s.close();
  await rm(dir, { recursive: true, force: true });
});

/** The type errors of the examples, compiled with the repository's compiler options (vitest only strips types). */
function typeErrors(files: readonly string[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(TSCONFIG, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error(`cannot read ${TSCONFIG}`);
  const program = ts.createProgram(files, config.options);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}

/** Runs an example as a module of its own, with `env` set while it runs. */
async function run(name: string, env: Record<string, string>): Promise<void> {
  const file = join(dir, `${name}.ts`);
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    await import(pathToFileURL(file).href);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe("docs/sdk.md", () => {
  it("has the two worked examples, each at most 30 lines", () => {
    expect([...code.keys()]).toEqual(["client", "embedded"]);
    for (const text of code.values()) expect(text.trimEnd().split("\n").length).toBeLessThanOrEqual(MAX_LINES);
  });

  it("the examples compile under the repository's strict options", () => {
    expect(typeErrors([...code.keys()].map((name) => join(dir, `${name}.ts`)))).toEqual([]);
  });

  it("the client example runs the workflow against a real sidecar", async () => {
    const from = new Date();
    await run("client", { WRIT_URL: s.sidecar.url, WRIT_API_KEY: API_KEY, WRIT_PUBLIC_KEY: s.publicKeyPem });
    const [row] = await s.a.auditDecisions({ from, policyId: "payments.transfer" });
    expect(row).toMatchObject({ decision: "pending_override", overrideResolution: "approved", confirmed: true });
    expect((await s.a.auditDecision(row!.executionId)).confirmation?.match).toBe(true);
  });

  it("the embedded example runs the workflow in-process, on LMDB", async () => {
    const keys = generateSigningKeyPair();
    const dataDir = join(dir, "lmdb");
    await run("embedded", {
      WRIT_POLICIES: await fixturePoliciesRoot(),
      WRIT_SIGNING_KEY: keys.privateKeyPem,
      WRIT_PUBLIC_KEY: keys.publicKeyPem,
      WRIT_DATA_DIR: dataDir,
    });
    expect((await stat(dataDir)).isDirectory()).toBe(true);
  });
});
