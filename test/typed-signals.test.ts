/**
 * Typed signals end to end, as an application meets them (docs/sdk.md "Typed signals"): `writ typegen` writes the
 * declarations of the shipped policies into a fresh project, whose files use the SDK with them; the TypeScript compiler
 * then checks that project. A misspelled signal, a string where a number belongs, a missing required signal and an
 * enum value the policy does not list each fail with their own diagnostic, at the member that is wrong; correct use
 * compiles, and so does code written without generated types, unchanged.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../compiler/src/cli/main.js";
import { signalDeclarations } from "../compiler/src/typegen/declarations.js";

const repo = new URL("../", import.meta.url).pathname;

/** The signals of payments.transfer@1.2.0 that the shipped policy accepts. */
const SIGNALS = `{ amount: 250, currency: "EUR", destination_account: "DE89370400440532013000", kyc_verified: true, risk_score: 20, daily_total: 0, account_age_days: 400 }`;
const HEAD = `import { EmbeddedAuthorizer, GovernanceClient, MemoryReplayStore } from "@writ/sdk";
import type { WritPolicies } from "./writ-policies.js";
export const writ = new GovernanceClient<WritPolicies>({ baseUrl: "http://127.0.0.1:1", apiKey: "k" });
export const embedded = new EmbeddedAuthorizer<WritPolicies>({ policiesRoot: "p", signingKeyPem: "k", store: new MemoryReplayStore() });
export const policy = { policyId: "payments.transfer", policyVersion: "1.2.0" } as const;
export const shapes = new GovernanceClient<import("./shapes.js").WritPolicies>({ baseUrl: "http://127.0.0.1:1", apiKey: "k" });
`;

/**
 * A schema writ's compiler does not write (its signals are scalars) but a bundle may hold: nested objects, closed and
 * open, and arrays.
 */
const SHAPES = {
  type: "object",
  properties: {
    address: {
      type: "object",
      properties: { city: { type: "string" }, zip: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    },
    labels: { type: "object" },
    scores: { type: "array", items: { type: "integer" } },
  },
  required: ["address", "scores"],
  additionalProperties: false,
};

/** Each fixture file: its code after HEAD, and the diagnostics tsc must report for it (code, message, line of HEAD + n). */
const CASES: Record<string, { readonly code: string; readonly expected: readonly { code: number; message: RegExp; line: number }[] }> = {
  "correct.ts": {
    code: `
await writ.evaluate({ executionId: "e1", ...policy, verifiedSignals: ${SIGNALS} });
await writ.evaluate({ executionId: "e2", ...policy, verifiedSignals: { ...${SIGNALS}, destination_country: "DE" } });
await writ.dryRun({ ...policy, signals: ${SIGNALS} });
await writ.simulate({ ...policy, signals: ${SIGNALS} });
await writ.execute({ executionId: "e3", ...policy, signals: ${SIGNALS} });
await embedded.evaluate({ executionId: "e4", ...policy, verifiedSignals: ${SIGNALS} });
await embedded.simulate({ ...policy, signals: ${SIGNALS} });
// An alias is resolved by the sidecar when the request arrives: its signals are those of some listed version.
await writ.evaluate({ executionId: "e5", policyId: "payments.transfer", policyVersion: "stable", verifiedSignals: ${SIGNALS} });
await writ.evaluate({ executionId: "e6", policyId: "deploy.production", policyVersion: "1.0.0", verifiedSignals: {
  service: "api", tier: "critical", change_ticket: "CHG-000001", commit_sha: "0".repeat(40), branch: "main", tests_passed: true,
  coverage: 90, requested_at: "2026-01-01T00:00:00Z", change_window_end: "2026-01-01T01:00:00Z", emergency: false, oncall_approved: true } });
await shapes.dryRun({ policyId: "shapes", policyVersion: "1.0.0", signals: { address: { city: "Bern" }, labels: { any: 1 }, scores: [1, 2] } });
`,
    expected: [],
  },
  "untyped.ts": {
    // Code written before typed signals: no type argument, any id, version and signals, a request typed by the wire.
    code: `
import type { AuthorizationWorkflow, ConfirmExecutionResponse, DryRunRequest, DryRunResponse, EvaluateRequest, EvaluateResponse, OverrideResponse, PolicySchema, SimulateResponse, VerifyResponse } from "@writ/sdk";
const plain = new GovernanceClient({ baseUrl: "http://127.0.0.1:1", apiKey: "k" });
await plain.evaluate({ executionId: "e1", policyId: "payments.transfer", policyVersion: "1.2.0", verifiedSignals: { amout: "250" } });
const request: EvaluateRequest = { executionId: "e2", policyId: String(Date.now()), policyVersion: "stable", verifiedSignals: {} };
await plain.evaluate(request);
await plain.dryRun({ policyId: "any", policyVersion: "1.0.0", signals: { anything: [1, 2] } });
const local = new EmbeddedAuthorizer({ policiesRoot: "p", signingKeyPem: "k", store: new MemoryReplayStore() });
await local.simulate({ policyId: "any", policyVersion: "1.0.0", signals: {} });
// The methods as values, their parameter types, and a workflow of the application's own written against the wire.
const bound: (r: EvaluateRequest) => Promise<unknown> = plain.evaluate.bind(plain);
const parameter: Parameters<GovernanceClient["evaluate"]>[0] = request;
const asWorkflow: AuthorizationWorkflow = local;
class Fake implements AuthorizationWorkflow {
  policySchema(): Promise<PolicySchema> { throw new Error("fake"); }
  evaluate(r: EvaluateRequest): Promise<EvaluateResponse> { throw new Error(r.policyId); }
  dryRun(r: DryRunRequest): Promise<DryRunResponse> { throw new Error(r.policyId); }
  simulate(r: DryRunRequest): Promise<SimulateResponse> { throw new Error(r.policyId); }
  override(): Promise<OverrideResponse> { throw new Error("fake"); }
  confirmExecution(): Promise<ConfirmExecutionResponse> { throw new Error("fake"); }
  verify(): Promise<VerifyResponse> { throw new Error("fake"); }
  async close(): Promise<void> {}
}
export const values = [bound, parameter, asWorkflow, new Fake()];
`,
    expected: [],
  },
  "misspelled.ts": {
    code: `
await writ.evaluate({ executionId: "e", ...policy, verifiedSignals: { ...${SIGNALS}, amout: 250 } });
`,
    expected: [
      { code: 2561, message: /'amout' does not exist in type 'PaymentsTransfer_1_2_0Signals'\. Did you mean to write 'amount'\?/, line: 2 },
    ],
  },
  "wrong-type.ts": {
    code: `
await writ.dryRun({ ...policy, signals: { ...${SIGNALS}, amount: "250" } });
`,
    expected: [{ code: 2322, message: /^Type 'string' is not assignable to type 'number'\.$/, line: 2 }],
  },
  "missing.ts": {
    code: `
await embedded.evaluate({ executionId: "e", ...policy, verifiedSignals: { amount: 250, currency: "EUR", destination_account: "DE89370400440532013000", risk_score: 20, daily_total: 0, account_age_days: 400 } });
`,
    expected: [
      {
        code: 2741,
        message: /^Property 'kyc_verified' is missing in type .* but required in type 'PaymentsTransfer_1_2_0Signals'\.$/,
        line: 2,
      },
    ],
  },
  "wrong-enum.ts": {
    code: `
await writ.simulate({ ...policy, signals: { ...${SIGNALS}, currency: "EURO" } });
`,
    expected: [
      {
        code: 2820,
        message: /^Type '"EURO"' is not assignable to type '"USD" \| "EUR" \| "GBP" \| "CHF" \| "JPY"'\. Did you mean '"EUR"'\?$/,
        line: 2,
      },
    ],
  },
  "wrong-integer.ts": {
    // An integer is a number in TypeScript (its doc comment says integer and the bounds): a boolean is still refused.
    code: `
await writ.execute({ executionId: "e", ...policy, signals: { ...${SIGNALS}, risk_score: true } });
`,
    expected: [{ code: 2322, message: /^Type 'boolean' is not assignable to type 'number'\.$/, line: 2 }],
  },
  "nested-closed.ts": {
    // A closed nested object refuses a member its schema does not declare; an open one takes any.
    code: `
await shapes.dryRun({ policyId: "shapes", policyVersion: "1.0.0", signals: { address: { city: "Bern", zipp: "3000" }, scores: [] } });
`,
    expected: [
      {
        code: 2561,
        message: /'zipp' does not exist in type '\{ city: string; zip\?: string; \}'\. Did you mean to write 'zip'\?/,
        line: 2,
      },
    ],
  },
  "array-items.ts": {
    code: `
await shapes.dryRun({ policyId: "shapes", policyVersion: "1.0.0", signals: { address: { city: "Bern" }, scores: [1, "2"] } });
`,
    expected: [{ code: 2322, message: /^Type 'string' is not assignable to type 'number'\.$/, line: 2 }],
  },
  "unknown-policy.ts": {
    code: `
await writ.evaluate({ executionId: "e", policyId: "payments.transfr", policyVersion: "1.2.0", verifiedSignals: ${SIGNALS} });
`,
    expected: [
      {
        code: 2820,
        message:
          /^Type '"payments\.transfr"' is not assignable to type 'PolicyIdOf<WritPolicies>'\. Did you mean '"payments\.transfer"'\?$/,
        line: 2,
      },
    ],
  },
  "alias-misspelled.ts": {
    // Under an alias the signals are those of any listed version: a member none of them declares is still refused.
    code: `
await writ.evaluate({ executionId: "e", policyId: "payments.transfer", policyVersion: "stable", verifiedSignals: { ...${SIGNALS}, amout: 1 } });
`,
    expected: [
      { code: 2561, message: /'amout' does not exist in type 'PaymentsTransfer_1_1_0Signals | PaymentsTransfer_1_2_0Signals'/, line: 2 },
    ],
  },
};

let dir: string;
let diagnostics: Map<string, { code: number; message: string; line: number }[]>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "writ-typed-signals-"));
  const err: string[] = [];
  const code = await main(["typegen", join(repo, "policies"), "--out", join(dir, "writ-policies.ts")], {
    cwd: dir,
    out: () => {},
    err: (l) => err.push(l),
  });
  expect({ code, err }).toEqual({ code: 0, err: [] });
  writeFileSync(join(dir, "shapes.ts"), await signalDeclarations([{ policyId: "shapes", version: "1.0.0", schema: SHAPES }]));
  for (const [name, { code: body }] of Object.entries(CASES)) writeFileSync(join(dir, name), `${HEAD}${body}`);
  diagnostics = typecheck([join(dir, "writ-policies.ts"), join(dir, "shapes.ts"), ...Object.keys(CASES).map((name) => join(dir, name))]);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * tsc on `files` with the repository's compiler options and `@writ/*` mapped to the packages' sources. Only `files` are
 * checked (the packages' own sources are checked by the repository's typecheck), with the options' and global
 * diagnostics.
 */
function typecheck(files: readonly string[]): Map<string, { code: number; message: string; line: number }[]> {
  const base = ts.readConfigFile(join(repo, "tsconfig.base.json"), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(base.config, ts.sys, repo);
  const paths = Object.fromEntries(["runtime", "wire", "sdk"].map((p) => [`@writ/${p}`, [join(repo, p, "src/index.ts")]]));
  const program = ts.createProgram(files, { ...options, noEmit: true, paths, typeRoots: [join(repo, "node_modules/@types")] });
  const byFile = new Map<string, { code: number; message: string; line: number }[]>();
  const checked = files.map((f) => program.getSourceFile(f)!);
  const all = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...checked.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
  ];
  for (const d of all) {
    const file = d.file?.fileName ?? "(global)";
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    // The innermost message: what is wrong at the member itself.
    let chain: ts.DiagnosticMessageChain | string = d.messageText;
    while (typeof chain !== "string" && chain.next?.[0]) chain = chain.next[0];
    const message = typeof chain === "string" ? chain : chain.messageText;
    byFile.set(file, [...(byFile.get(file) ?? []), { code: typeof chain === "string" ? d.code : chain.code, message, line }]);
  }
  return byFile;
}

const headLines = HEAD.split("\n").length - 1;

describe("typed signals, checked by tsc", () => {
  it("the generated declarations of the shipped policies compile, and nothing outside the fixtures is reported", () => {
    expect(readFileSync(join(dir, "writ-policies.ts"), "utf8")).toContain(
      '"payments.transfer": {\n    "1.1.0": PaymentsTransfer_1_1_0Signals;\n    "1.2.0": PaymentsTransfer_1_2_0Signals;',
    );
    const elsewhere = [...diagnostics.keys()].filter((file) => !Object.keys(CASES).some((name) => file === join(dir, name)));
    expect(elsewhere.map((file) => [file, diagnostics.get(file)])).toEqual([]);
  });

  it.each(Object.entries(CASES))("%s", (name, { expected }) => {
    const actual = diagnostics.get(join(dir, name)) ?? [];
    expect(actual.map((d) => ({ ...d, line: d.line - headLines }))).toEqual(
      expected.map((e) => ({ code: e.code, message: expect.stringMatching(e.message), line: e.line })),
    );
  });
});
