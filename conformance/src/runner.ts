/**
 * `runConformance`: every case of one surface against one server, over HTTP only. Cases run one at a time in file
 * order, the `runLast` ones (which spend a server-wide budget such as the rate limit) at the end; each case is
 * isolated (its own UUIDs and captures); a failing step stops its case; a case that needs the public key is skipped
 * without one. A server that cannot be reached at all, a bad key or a malformed case file is a setup error
 * (`ConformanceSetupError`), not a failed case.
 */
import { readFile } from "node:fs/promises";
import type { LoadedCase, Surface } from "./case-file.js";
import { describeNetworkError, HttpClient, NetworkError } from "./http-client.js";
import { CaseFileError, DEFAULT_CASES_DIR, loadCases } from "./load-cases.js";
import { pinPublicKey, PinnedKeyError, type PinnedKey } from "./pinned-key.js";
import { buildReport, type CaseResult, type ConformanceReport, type Failure } from "./report.js";
import { runStep, type StepContext } from "./run-step.js";
import { CaseScope } from "./templates.js";

export class ConformanceSetupError extends Error {
  override readonly name = "ConformanceSetupError";
}

export interface ConformanceOptions {
  readonly surface: Surface;
  /** `http(s)://host[:port][/prefix]` of the surface under test. */
  readonly baseUrl: string;
  /** The server's Bearer key (spec 5). */
  readonly apiKey: string;
  /** The server's Ed25519 public key (SPKI PEM); without it, cases that check signatures are skipped. */
  readonly publicKeyPem?: string;
  /** Default: the suite's own `conformance/cases`. */
  readonly casesDir?: string;
  /** An id prefix (`a.evaluate.`), or a predicate over the loaded cases. */
  readonly filter?: string | ((testCase: LoadedCase) => boolean);
  /** Called after each case, e.g. for progress output. */
  readonly onCase?: (result: CaseResult) => void;
  /** Per request (default 30 s). */
  readonly timeoutMs?: number;
}

const PACKAGE_JSON = new URL("../package.json", import.meta.url);

async function suiteVersion(): Promise<string> {
  return (JSON.parse(await readFile(PACKAGE_JSON, "utf8")) as { version: string }).version;
}

function checkBaseUrl(baseUrl: string): void {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConformanceSetupError(`the base URL \`${baseUrl}\` is not a URL (e.g. http://127.0.0.1:8080)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConformanceSetupError(`the base URL \`${baseUrl}\` must be http or https`);
  if (url.search !== "" || url.hash !== "")
    throw new ConformanceSetupError(`the base URL \`${baseUrl}\` must not have a query or fragment`);
}

/** Any HTTP answer at all (even a 404) shows the server is there; no answer is a setup error, not 60 failed cases. */
async function probe(client: HttpClient, baseUrl: string): Promise<void> {
  try {
    await client.send({ method: "GET", path: "/health", headers: {} });
  } catch (e) {
    const why = e instanceof NetworkError ? e.message.replace(/^GET \/health: no answer: /, "") : describeNetworkError(e);
    throw new ConformanceSetupError(`cannot reach \`${baseUrl}\`: ${why}`);
  }
}

function selected(cases: readonly LoadedCase[], filter: ConformanceOptions["filter"]): LoadedCase[] {
  const keep = filter === undefined ? () => true : typeof filter === "string" ? (c: LoadedCase) => c.id.startsWith(filter) : filter;
  const chosen = cases.filter(keep);
  return [...chosen.filter((c) => c.runLast !== true), ...chosen.filter((c) => c.runLast === true)];
}

async function runCase(testCase: LoadedCase, ctx: StepContext): Promise<CaseResult> {
  const started = performance.now();
  const base = { id: testCase.id, section: testCase.section, title: testCase.title, file: testCase.file };
  if ((testCase.requires ?? []).includes("public-key") && ctx.key === null) {
    return { ...base, outcome: "skip", durationMs: 0, failures: [], skipReason: "needs the server's public key (--public-key)" };
  }
  const scope = new CaseScope();
  const failures: Failure[] = [];
  for (const [index, step] of testCase.steps.entries()) {
    let problems: string[];
    try {
      problems = await runStep(step, scope, ctx);
    } catch (e) {
      problems = [`internal error of the suite: ${e instanceof Error ? e.message : String(e)}`];
    }
    if (problems.length > 0) {
      failures.push(...problems.map((message) => ({ step: index, message })));
      break;
    }
  }
  return { ...base, outcome: failures.length === 0 ? "pass" : "fail", durationMs: Math.round(performance.now() - started), failures };
}

/** @throws ConformanceSetupError when the run cannot start (bad URL, key or case files; server unreachable) */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  checkBaseUrl(options.baseUrl);
  if (options.apiKey === "") throw new ConformanceSetupError("the API key is empty");
  let key: PinnedKey | null = null;
  if (options.publicKeyPem !== undefined) {
    try {
      key = pinPublicKey(options.publicKeyPem);
    } catch (e) {
      if (e instanceof PinnedKeyError)
        throw new ConformanceSetupError(`the public key is ${e.message.startsWith("refused") ? "" : "unusable: "}${e.message}`);
      throw e;
    }
  }
  let cases: LoadedCase[];
  try {
    cases = selected(await loadCases(options.surface, options.casesDir ?? DEFAULT_CASES_DIR), options.filter);
  } catch (e) {
    if (e instanceof CaseFileError) throw new ConformanceSetupError(e.message);
    throw e;
  }
  if (cases.length === 0)
    throw new ConformanceSetupError(
      `no case of surface ${options.surface} matches the filter${typeof options.filter === "string" ? ` \`${options.filter}\`` : ""}`,
    );

  const client = new HttpClient(options.baseUrl, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
  try {
    await probe(client, options.baseUrl);
    const startedAt = new Date();
    const started = performance.now();
    const results: CaseResult[] = [];
    const ctx: StepContext = { client, apiKey: options.apiKey, key };
    for (const testCase of cases) {
      const result = await runCase(testCase, ctx);
      results.push(result);
      options.onCase?.(result);
    }
    return buildReport({
      suiteVersion: await suiteVersion(),
      target: options.baseUrl,
      surface: options.surface,
      startedAt,
      durationMs: Math.round(performance.now() - started),
      publicKeyId: key?.keyId ?? null,
      cases: results,
    });
  } finally {
    await client.close();
  }
}
