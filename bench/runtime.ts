/**
 * Runtime benchmark (`npm run bench:runtime`, i.e. `tsx bench/runtime.ts`). Not a test: it prints numbers.
 *
 * The shipped policy payments.transfer@1.2.0 is compiled (with a fresh signing key), written to a temp dir and
 * loaded with `loadBundle`, as the service does. Its 25 valid test cases (policy.test.json) are the signal sets:
 * together they make every rule and the `otherwise` decide. Two things are measured, each against something
 * measured in the same run (the project's benchmark rule):
 *
 *   1. Decisions per second: `bundle.validateSignals` (ajv) + `bundle.policy.evaluate` (IR closures), against
 *      Cedar (@cedar-policy/cedar-wasm, in-process) `statefulIsAuthorized` over an equivalent Cedar policy set and
 *      schema, pre-parsed once with `preparsePolicySet` / `preparseSchema`, the request context validated against
 *      the schema as writ validates the signals. Goal: writ at least 100× Cedar. Both must agree on every set
 *      (approve = allow; reject / escalate = deny), down to the rule that decides; the script throws otherwise.
 *   2. Signed attestations per second: `createAttestation` (JCS, hashes, Ed25519 sign and self-verify), against
 *      bare node:crypto Ed25519 `sign` + `verify` of the same signing input (PAE bytes computed once with
 *      `signingInput`), the physical limit. Goal: at least 90% of it.
 *
 * Contenders are run interleaved (one repetition of each in turn) so drifting load on the shared machine hits all
 * of them alike; the figure to quote is the median over the repetitions, min and max show the spread.
 *
 * Environment: BENCH_REPS (default 11), BENCH_WARMUP (warm-up repetitions, default 2), BENCH_DECISIONS (writ
 * decisions per repetition, default 200000), BENCH_CEDAR_DECISIONS (Cedar decisions per repetition, default 5000),
 * BENCH_ATTESTATIONS (attestations and bare sign+verify per repetition, default 2000).
 */
import { sign as edSign, verify as edVerify } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { arch, cpus, platform, tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "@writ/compiler";
import {
  OTHERWISE_RULE_ID,
  PAYLOAD_TYPES,
  attestationBody,
  createAttestation,
  createRuntimeIdentity,
  createSigner,
  createTrustRoot,
  executionFingerprint,
  generateSigningKeyPair,
  loadBundle,
  loadSigningKeyPem,
  signalsHash,
  signingInput,
  type DecisionRecord,
  type LoadedBundle,
  type PolicyIr,
  type Verdict,
} from "@writ/runtime";
import type * as CedarModule from "@cedar-policy/cedar-wasm/nodejs";

const REPS = Number(process.env["BENCH_REPS"] ?? 11);
const WARMUP = Number(process.env["BENCH_WARMUP"] ?? 2);
const WRIT_N = Number(process.env["BENCH_DECISIONS"] ?? 200_000);
const CEDAR_N = Number(process.env["BENCH_CEDAR_DECISIONS"] ?? 5_000);
const ATTEST_N = Number(process.env["BENCH_ATTESTATIONS"] ?? 2_000);
const DECISION_GOAL = 100; // writ decisions/s at least 100× Cedar's
const ATTEST_GOAL = 0.9; // writ attestations/s at least 90% of bare Ed25519 sign + verify

const POLICY_DIR = "policies/payments.transfer/1.2.0";
const ISSUED_AT = "2026-11-22T12:00:00.000Z";

// ---------------------------------------------------------------------------------------------------------
// Measurement: every contender runs `n` operations per repetition; the sample is operations per second.

interface Stats {
  /** Operations per second of each recorded repetition, in order. */
  readonly samples: readonly number[];
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

function stats(samples: readonly number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const mid = s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return { samples, median: mid, min: s[0]!, max: s[s.length - 1]! };
}

interface Contender {
  readonly label: string;
  readonly n: number;
  /** Runs `n` operations and returns a checksum, which must be the same every repetition. */
  readonly run: (n: number) => number;
}

/** Interleaved repetitions: WARMUP unrecorded rounds, then REPS recorded ones, each contender once per round. */
function measure(contenders: readonly Contender[]): Stats[] {
  const samples = contenders.map(() => [] as number[]);
  const checksums = new Map<number, number>();
  for (let rep = 0; rep < WARMUP + REPS; rep++) {
    contenders.forEach((c, i) => {
      const t0 = performance.now();
      const sum = c.run(c.n);
      const elapsed = performance.now() - t0;
      if (!checksums.has(i)) checksums.set(i, sum);
      if (sum !== checksums.get(i))
        throw new Error(`${c.label}: checksum ${sum} differs from ${checksums.get(i)} (non-deterministic result)`);
      if (rep >= WARMUP) samples[i]!.push((c.n * 1000) / elapsed);
    });
  }
  return samples.map(stats);
}

const rate = (v: number) =>
  v >= 1e6
    ? `${(v / 1e6).toFixed(2)} M/s`
    : v >= 1e4
      ? `${(v / 1e3).toFixed(1)} k/s`
      : v >= 1e3
        ? `${(v / 1e3).toFixed(2)} k/s`
        : `${v.toFixed(0)} /s`;
const micros = (opsPerSecond: number) => {
  const us = 1e6 / opsPerSecond;
  return `${us >= 100 ? us.toFixed(0) : us >= 10 ? us.toFixed(1) : us.toFixed(2)} µs`;
};

const rows: [label: string, s: Stats | null, ratio: string, goal: string][] = [];
const row = (label: string, s: Stats | null, ratio = "", goal = "") => rows.push([label, s, ratio, goal]);

function printTable(): void {
  const w = Math.max(...rows.map(([l]) => l.length)) + 2;
  const col = (v: string, n = 12) => v.padStart(n);
  console.log(`${"step".padEnd(w)}${col("median")}${col("per op")}${col("min")}${col("max")}${col("ratio", 10)}  goal met`);
  console.log("-".repeat(w + 48 + 10 + 10));
  for (const [label, s, ratio, goal] of rows) {
    const figures = s ? col(rate(s.median)) + col(micros(s.median)) + col(rate(s.min)) + col(rate(s.max)) : "".padEnd(48);
    console.log(`${label.padEnd(w)}${figures}${col(ratio, 10)}  ${goal}`.trimEnd());
  }
}

// ---------------------------------------------------------------------------------------------------------
// The policy, its bundle and its signal sets

interface TestCase {
  readonly name: string;
  readonly signals: Record<string, unknown>;
  readonly expect: { readonly verdict?: Verdict; readonly rule?: string; readonly invalid?: readonly string[] };
}

async function loadPolicy(key: ReturnType<typeof loadSigningKeyPem>): Promise<{ bundle: LoadedBundle; cases: TestCase[]; root: string }> {
  const path = join(POLICY_DIR, "policy.writ");
  const result = compile(path, await readFile(path, "utf8"), { signingKey: key });
  if (!result.valid || !result.bundle) {
    throw new Error(
      `${path} does not compile: ${result.errors
        .slice(0, 3)
        .map((e) => `${e.code} ${e.message}`)
        .join("; ")}`,
    );
  }
  const root = await mkdtemp(join(tmpdir(), "writ-bench-runtime-"));
  const dir = join(root, result.bundle.policyId, result.bundle.version);
  await mkdir(dir, { recursive: true });
  for (const [name, bytes] of result.bundle.files) await writeFile(join(dir, name), bytes);
  const bundle = await loadBundle(root, result.bundle.policyId, result.bundle.version, {
    trustedKeys: [key.publicKey],
    requireSignature: true,
  });
  const tests = JSON.parse(await readFile(join(POLICY_DIR, "policy.test.json"), "utf8")) as { cases: TestCase[] };
  return { bundle, cases: tests.cases, root };
}

// ---------------------------------------------------------------------------------------------------------
// The Cedar peer: the same nine rules as Cedar policies, one per rule, under the rule's id.
//
// Equivalence, rule by rule (checked on every signal set below, down to the deciding rule):
// - writ decides by the first rule that fires; Cedar allows when a permit holds and no forbid does. The only
//   approving rule (within_limits) comes after every rejecting / escalating rule and `otherwise` escalates, so
//   "first match is within_limits" is exactly "the permit holds and no forbid does". The script checks this shape
//   on the IR before it relies on it.
// - amounts: Cedar has integers (Long) and a `decimal` type without addition, so `amount` and `daily_total` are
//   sent in hundredths (minor units, Long) and the constants scaled alike; every amount in the signal sets is
//   exact in hundredths (checked).
// - `destination_account matches /^(CU|IR|KP|SY)[0-9]{2}/`: Cedar has `like` (wildcards) only; the signals schema
//   already requires `^[A-Z]{2}[0-9]{2}…`, so for valid signals `like "CU*"` (etc.) is the same test.
// - an absent optional signal: writ's unknown never makes a rule fire; Cedar reads it after `context has`.
// - Cedar's schema checks types, required and undeclared attributes; it has no ranges, string enums or patterns,
//   so its request validation does less than writ's ajv schema (exclusiveMinimum/maximum, enum, two patterns).

const CENTS = 100;
const ACTION = "transfer.execute";
const CEDAR_SCHEMA = `entity Customer;
entity Account;
action "${ACTION}" appliesTo {
  principal: Customer,
  resource: Account,
  context: {
    amount: Long,
    currency: String,
    destination_account: String,
    kyc_verified: Bool,
    risk_score: Long,
    daily_total: Long,
    account_age_days: Long,
    destination_country?: String,
  },
};
`;
const scope = `(principal, action == Action::"${ACTION}", resource)`;
const CEDAR_POLICIES: Readonly<Record<string, { effect: "permit" | "forbid"; when: string }>> = {
  // destination_country in SANCTIONED or destination_account matches /^(CU|IR|KP|SY)[0-9]{2}/
  sanctioned: {
    effect: "forbid",
    when:
      `(context has destination_country && ["CU", "IR", "KP", "SY"].contains(context.destination_country)) || ` +
      `context.destination_account like "CU*" || context.destination_account like "IR*" || ` +
      `context.destination_account like "KP*" || context.destination_account like "SY*"`,
  },
  // risk_score > HIGH_RISK
  high_risk: { effect: "forbid", when: "context.risk_score > 80" },
  // not kyc_verified
  no_kyc: { effect: "forbid", when: "!context.kyc_verified" },
  // daily_total + amount > DAILY_LIMIT
  over_daily_limit: { effect: "forbid", when: `context.daily_total + context.amount > ${25000 * CENTS}` },
  // account_age_days < 30 and amount >= 1000
  new_account: { effect: "forbid", when: `context.account_age_days < 30 && context.amount >= ${1000 * CENTS}` },
  // amount > REVIEW_AMOUNT
  large: { effect: "forbid", when: `context.amount > ${10000 * CENTS}` },
  // not present(destination_country) and amount >= UNRESOLVED_LIMIT
  unresolved_destination: { effect: "forbid", when: `!(context has destination_country) && context.amount >= ${5000 * CENTS}` },
  // risk_score in ELEVATED_RISK..HIGH_RISK and currency not in AUTO_CURRENCIES
  elevated_risk: {
    effect: "forbid",
    when: `context.risk_score >= 60 && context.risk_score <= 80 && !(["USD", "EUR", "GBP"].contains(context.currency))`,
  },
  // risk_score < ELEVATED_RISK and currency in AUTO_CURRENCIES
  within_limits: { effect: "permit", when: `context.risk_score < 60 && ["USD", "EUR", "GBP"].contains(context.currency)` },
};

/** Fails loudly unless the Cedar set mirrors the IR: same rules, same order, forbid-overrides equals first-match. */
function checkCedarShape(ir: PolicyIr): void {
  const ids = Object.keys(CEDAR_POLICIES);
  if (ids.join() !== ir.rules.map((r) => r.id).join()) {
    throw new Error(`Cedar translation is stale: it has rules ${ids.join(", ")}; the IR has ${ir.rules.map((r) => r.id).join(", ")}`);
  }
  let seenApprove = false;
  for (const r of ir.rules) {
    const effect = CEDAR_POLICIES[r.id]!.effect;
    if (effect !== (r.verdict === "approve" ? "permit" : "forbid"))
      throw new Error(`Cedar policy ${r.id} is a ${effect}, the rule ${r.verdict}s`);
    if (seenApprove && r.verdict !== "approve")
      throw new Error(`rule ${r.id} follows an approving rule: Cedar's forbid-overrides would not be first-match`);
    seenApprove ||= r.verdict === "approve";
  }
  if (ir.otherwise?.verdict === "approve") throw new Error("`otherwise approve` has no equivalent in Cedar's default deny");
}

/** The Cedar request context for a signal set: amounts in hundredths, everything else as is. */
function cedarContext(signals: Readonly<Record<string, unknown>>): Record<string, CedarModule.CedarValueJson> {
  const out: Record<string, CedarModule.CedarValueJson> = {};
  for (const [name, v] of Object.entries(signals)) {
    if (name === "amount" || name === "daily_total") {
      const minor = Math.round((v as number) * CENTS);
      if (minor / CENTS !== v) throw new Error(`${name} ${String(v)} is not exact in hundredths`);
      out[name] = minor;
    } else {
      out[name] = v as CedarModule.CedarValueJson;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  let cedar: typeof CedarModule;
  try {
    cedar = await import("@cedar-policy/cedar-wasm/nodejs");
  } catch (e) {
    throw new Error(`@cedar-policy/cedar-wasm is needed for the decision comparison: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
  const key = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);
  const { bundle, cases, root } = await loadPolicy(key);
  await rm(root, { recursive: true, force: true });
  const { ir } = bundle;
  const valid = cases.filter((c) => c.expect.invalid === undefined);
  const sets = valid.map((c) => c.signals);

  const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
  console.log(
    `writ runtime benchmark: ${ir.policyId}@${ir.version} (${ir.rules.length} rules + otherwise, ${Object.keys(ir.signals).length} signals)`,
  );
  console.log(`  ${sets.length} signal sets: the valid cases of ${POLICY_DIR}/policy.test.json, used in turn`);
  console.log(
    `  node ${process.version}, ${platform()} ${arch()}, ${cpus().length} × ${cpu}, Cedar ${cedar.getCedarVersion()} (cedar-wasm)`,
  );
  console.log(
    `  ${REPS} repetitions after ${WARMUP} warm-up, contenders interleaved; per repetition ${WRIT_N.toLocaleString("en")} writ / ` +
      `${CEDAR_N.toLocaleString("en")} Cedar decisions, ${ATTEST_N.toLocaleString("en")} attestations / bare sign+verify`,
  );
  console.log("  the machine is shared and noisy: quote medians and same-run ratios, not single runs\n");

  // --- writ: decide every set once, check against the test file, and that every rule is exercised.
  const decisions = sets.map((signals, i) => {
    const v = bundle.validateSignals(signals);
    if (!v.valid) throw new Error(`signal set ${i} (${valid[i]!.name}) is refused: ${JSON.stringify(v.errors)}`);
    const d = bundle.policy.evaluate(signals);
    if (!d.decided) throw new Error(`signal set ${i} is undecided`);
    const e = valid[i]!.expect;
    if (d.verdict !== e.verdict || (e.rule !== undefined && d.ruleId !== e.rule)) {
      throw new Error(
        `signal set ${i} (${valid[i]!.name}): writ says ${d.verdict} by ${d.ruleId}, the test file ${e.verdict} by ${e.rule}`,
      );
    }
    return d;
  });
  const hit = new Set(decisions.map((d) => d.ruleId));
  const missed = [...ir.rules.map((r) => r.id), ...(ir.otherwise ? [OTHERWISE_RULE_ID] : [])].filter((id) => !hit.has(id));
  if (missed.length > 0) throw new Error(`the signal sets never decide by ${missed.join(", ")}`);
  const approvals = decisions.filter((d) => d.verdict === "approve").length;

  // --- Cedar: pre-parse once, then check agreement on every set, down to the deciding rule.
  checkCedarShape(ir);
  const policySet = {
    staticPolicies: Object.fromEntries(Object.entries(CEDAR_POLICIES).map(([id, p]) => [id, `${p.effect} ${scope}\nwhen { ${p.when} };`])),
  };
  const validation = cedar.validate({ schema: CEDAR_SCHEMA, policies: policySet, validationSettings: { mode: "strict" } });
  if (validation.type !== "success")
    throw new Error(`Cedar schema or policies do not parse: ${JSON.stringify(validation.errors.slice(0, 2))}`);
  if (validation.validationErrors.length > 0)
    throw new Error(`Cedar policies do not validate: ${JSON.stringify(validation.validationErrors.slice(0, 2))}`);
  for (const answer of [cedar.preparsePolicySet("payments", policySet), cedar.preparseSchema("payments", CEDAR_SCHEMA)]) {
    if (answer.type !== "success") throw new Error(`Cedar pre-parse failed: ${JSON.stringify(answer.errors.slice(0, 2))}`);
  }
  const principal = { type: "Customer", id: "customer-1" };
  const resource = { type: "Account", id: "account-1" };
  const action = { type: "Action", id: ACTION };
  const statefulCalls: CedarModule.StatefulAuthorizationCall[] = sets.map((s) => ({
    principal,
    action,
    resource,
    context: cedarContext(s),
    preparsedSchemaName: "payments",
    validateRequest: true,
    preparsedPolicySetId: "payments",
    entities: [],
  }));
  // The same without the schema: evaluation alone (an informative row, not the comparison).
  const unvalidatedCalls: CedarModule.StatefulAuthorizationCall[] = statefulCalls.map(
    ({ principal, action, resource, context, preparsedPolicySetId, entities }) => ({
      principal,
      action,
      resource,
      context,
      preparsedPolicySetId,
      entities,
    }),
  );
  // The stateless call, which parses the policy set and schema on every request (informative).
  const statelessCalls: CedarModule.AuthorizationCall[] = statefulCalls.map(({ principal, action, resource, context, entities }) => ({
    principal,
    action,
    resource,
    context,
    schema: CEDAR_SCHEMA,
    validateRequest: true,
    policies: policySet,
    entities,
  }));
  const ruleOrder = new Map(ir.rules.map((r, i) => [r.id, i]));
  for (const [i, call] of statefulCalls.entries()) {
    const d = decisions[i]!;
    for (const [how, answer] of [
      ["statefulIsAuthorized", cedar.statefulIsAuthorized(call)],
      ["statefulIsAuthorized without schema", cedar.statefulIsAuthorized(unvalidatedCalls[i]!)],
      ["isAuthorized", cedar.isAuthorized(statelessCalls[i]!)],
    ] as const) {
      if (answer.type !== "success") throw new Error(`Cedar ${how} failed on set ${i}: ${JSON.stringify(answer.errors.slice(0, 2))}`);
      const { decision, diagnostics } = answer.response;
      if (diagnostics.errors.length > 0)
        throw new Error(`Cedar ${how} evaluation errors on set ${i}: ${JSON.stringify(diagnostics.errors)}`);
      const decisive =
        [...diagnostics.reason].sort((a, b) => (ruleOrder.get(a) ?? 1e9) - (ruleOrder.get(b) ?? 1e9))[0] ?? OTHERWISE_RULE_ID;
      if ((decision === "allow") !== (d.verdict === "approve") || decisive !== d.ruleId) {
        throw new Error(
          `DISAGREEMENT on signal set ${i} (${valid[i]!.name}): writ ${d.verdict} by ${d.ruleId}, ` +
            `Cedar ${how} ${decision} (determining policies: ${diagnostics.reason.join(", ") || "none"})`,
        );
      }
    }
  }
  // The schema is really applied on the measured path: a mistyped context is refused.
  const mistyped = cedar.statefulIsAuthorized({ ...statefulCalls[0]!, context: { ...statefulCalls[0]!.context, risk_score: "20" } });
  if (mistyped.type !== "failure") throw new Error("Cedar statefulIsAuthorized accepted a mistyped context: the schema is not applied");
  console.log(
    `agreement: writ and Cedar agree on all ${sets.length} signal sets (${approvals} allow, ${sets.length - approvals} deny), ` +
      `each decided by the same rule; all ${ir.rules.length} rules and \`otherwise\` are exercised\n`,
  );

  // --- 1. Decisions per second.
  const n = sets.length;
  const validate = bundle.validateSignals;
  const policy = bundle.policy;
  const writDecide: Contender = {
    label: "writ: validateSignals + evaluate",
    n: WRIT_N,
    run: (count) => {
      let allowed = 0;
      for (let i = 0; i < count; i++) {
        const signals = sets[i % n]!;
        if (!validate(signals).valid) throw new Error("refused");
        const d = policy.evaluate(signals);
        if (d.decided && d.verdict === "approve") allowed++;
      }
      return allowed;
    },
  };
  const writValidate: Contender = {
    label: "  of which: validateSignals (ajv)",
    n: WRIT_N,
    run: (count) => {
      let ok = 0;
      for (let i = 0; i < count; i++) if (validate(sets[i % n]!).valid) ok++;
      return ok;
    },
  };
  const writEvaluate: Contender = {
    label: "  of which: evaluate (IR closures)",
    n: WRIT_N,
    run: (count) => {
      let allowed = 0;
      for (let i = 0; i < count; i++) {
        const d = policy.evaluate(sets[i % n]!);
        if (d.decided && d.verdict === "approve") allowed++;
      }
      return allowed;
    },
  };
  const cedarRun =
    (calls: readonly CedarModule.StatefulAuthorizationCall[]) =>
    (count: number): number => {
      let allowed = 0;
      for (let i = 0; i < count; i++) {
        const a = cedar.statefulIsAuthorized(calls[i % n]!);
        if (a.type !== "success") throw new Error("Cedar failed");
        if (a.response.decision === "allow") allowed++;
      }
      return allowed;
    };
  const cedarDecide: Contender = { label: "cedar: statefulIsAuthorized (schema)", n: CEDAR_N, run: cedarRun(statefulCalls) };
  const cedarBare: Contender = { label: "  cedar: statefulIsAuthorized, no schema", n: CEDAR_N, run: cedarRun(unvalidatedCalls) };
  const cedarStateless: Contender = {
    label: "  cedar: isAuthorized (parses per call)",
    n: Math.max(1, Math.round(CEDAR_N / 50)),
    run: (count) => {
      let allowed = 0;
      for (let i = 0; i < count; i++) {
        const a = cedar.isAuthorized(statelessCalls[i % n]!);
        if (a.type === "success" && a.response.decision === "allow") allowed++;
      }
      return allowed;
    },
  };
  const [sWrit, sValidate, sEvaluate, sCedar, sCedarBare, sCedarStateless] = measure([
    writDecide,
    writValidate,
    writEvaluate,
    cedarDecide,
    cedarBare,
    cedarStateless,
  ]) as [Stats, Stats, Stats, Stats, Stats, Stats];
  const decisionRatio = sWrit.median / sCedar.median;
  row(
    writDecide.label,
    sWrit,
    `${decisionRatio.toFixed(0)}×`,
    `${decisionRatio >= DECISION_GOAL ? "yes" : "NO"} (≥ ${DECISION_GOAL}× Cedar)`,
  );
  row(writValidate.label, sValidate);
  row(writEvaluate.label, sEvaluate);
  row(cedarDecide.label, sCedar, "1×", "(peer)");
  row(cedarBare.label, sCedarBare, `${(sCedarBare.median / sCedar.median).toFixed(2)}×`);
  row(cedarStateless.label, sCedarStateless, `${(sCedarStateless.median / sCedar.median).toFixed(2)}×`);

  // --- 2. Signed attestations per second.
  const trustRoot = createTrustRoot("bench-1", [key.publicKey]);
  const signer = createSigner(key, trustRoot);
  const runtime = createRuntimeIdentity(signer);
  const records: DecisionRecord[] = sets.map((signals, i) => ({
    executionId: `bench-execution-${String(i).padStart(4, "0")}`,
    bundle: bundle.manifest,
    binding: ir.governs.binding,
    signals,
    verdict: decisions[i]!.verdict,
    reason: decisions[i]!.reason,
    issuedAt: ISSUED_AT,
  }));
  const attestations = records.map((r) => createAttestation(r, signer, runtime));
  const inputs = attestations.map((a) => signingInput(PAYLOAD_TYPES.attestation, a));
  const privateKey = key.privateKey;
  const publicKey = key.publicKey.key;
  for (const [i, input] of inputs.entries()) {
    // Ed25519 is deterministic: the same key over the same bytes gives the same signature.
    if (edSign(null, input, privateKey).toString("base64") !== attestations[i]!.signature) {
      throw new Error(`bare signature over the signing input of attestation ${i} differs from the attestation's`);
    }
  }
  const writAttest: Contender = {
    label: "writ: createAttestation (sign + self-verify)",
    n: ATTEST_N,
    run: (count) => {
      let len = 0;
      for (let i = 0; i < count; i++) len += createAttestation(records[i % n]!, signer, runtime).signature.length;
      return len;
    },
  };
  const bareSignVerify: Contender = {
    label: "bare: node:crypto Ed25519 sign + verify",
    n: ATTEST_N,
    run: (count) => {
      let ok = 0;
      for (let i = 0; i < count; i++) {
        const input = inputs[i % n]!;
        const signature = edSign(null, input, privateKey);
        if (edVerify(null, input, publicKey, signature)) ok++;
      }
      return ok;
    },
  };
  // Where createAttestation's time goes beyond the two curve operations (each measured alone).
  const subN = ATTEST_N * 2;
  const bareSign: Contender = {
    label: "  of which: sign",
    n: ATTEST_N,
    run: (count) => {
      let len = 0;
      for (let i = 0; i < count; i++) len += edSign(null, inputs[i % n]!, privateKey).length;
      return len;
    },
  };
  const signatures = inputs.map((input) => edSign(null, input, privateKey));
  const bareVerify: Contender = {
    label: "  of which: verify",
    n: ATTEST_N,
    run: (count) => {
      let ok = 0;
      for (let i = 0; i < count; i++) if (edVerify(null, inputs[i % n]!, publicKey, signatures[i % n]!)) ok++;
      return ok;
    },
  };
  const bodyOf = (r: DecisionRecord) => attestationBody(r, trustRoot.version, key.keyId, runtime.manifestHash);
  const bodies = records.map(bodyOf);
  const subBody: Contender = {
    label: "  writ beyond them: attestationBody",
    n: subN,
    run: (count) => {
      let len = 0;
      for (let i = 0; i < count; i++) len += bodyOf(records[i % n]!).signalsHash.length;
      return len;
    },
  };
  const subSignals: Contender = {
    label: "    of which: signalsHash (JCS + SHA-256)",
    n: subN,
    run: (count) => {
      let len = 0;
      for (let i = 0; i < count; i++) len += signalsHash(sets[i % n]!).length;
      return len;
    },
  };
  const subFingerprint: Contender = {
    label: "    of which: executionFingerprint",
    n: subN,
    run: (count) => {
      let len = 0;
      for (let i = 0; i < count; i++) len += executionFingerprint(records[i % n]!.executionId).length;
      return len;
    },
  };
  const subInput: Contender = {
    label: "  verifier's path: signingInput (generic JCS + PAE)",
    n: subN,
    run: (count) => {
      let len = 0;
      for (let i = 0; i < count; i++) len += signingInput(PAYLOAD_TYPES.attestation, bodies[i % n]!).length;
      return len;
    },
  };
  const [sAttest, sBare, sSign, sVerify, sBody, sSignals, sFingerprint, sInput] = measure([
    writAttest,
    bareSignVerify,
    bareSign,
    bareVerify,
    subBody,
    subSignals,
    subFingerprint,
    subInput,
  ]) as [Stats, Stats, Stats, Stats, Stats, Stats, Stats, Stats];
  // Paired: each repetition's ratio (the two ran back to back, under the same load), then the median of those. On a
  // shared machine this is steadier than the ratio of the two medians, which can pair a quiet repetition of one with
  // a noisy one of the other; both are printed.
  const attestRatio = stats(sAttest.samples.map((v, i) => v / sBare.samples[i]!)).median;
  const ratioOfMedians = sAttest.median / sBare.median;
  row(
    writAttest.label,
    sAttest,
    `${(attestRatio * 100).toFixed(1)}%`,
    `${attestRatio >= ATTEST_GOAL ? "yes" : "NO"} (≥ ${ATTEST_GOAL * 100}% of bare)`,
  );
  row(bareSignVerify.label, sBare, "100%", "(physical limit)");
  row(bareSign.label, sSign);
  row(bareVerify.label, sVerify);
  row(subBody.label, sBody);
  row(subSignals.label, sSignals);
  row(subFingerprint.label, sFingerprint);
  row(subInput.label, sInput);

  printTable();

  const overheadUs = 1e6 / sAttest.median - 1e6 / sBare.median;
  const accounted = 1e6 / sBody.median + 1e6 / sInput.median;
  const payloadBytes = inputs.reduce((s, b) => s + b.length, 0) / inputs.length;
  console.log("\ncomparisons (same run, medians):");
  console.log(
    `  decisions:    writ ${rate(sWrit.median)} / Cedar statefulIsAuthorized ${rate(sCedar.median)} = ${decisionRatio.toFixed(0)}× ` +
      `(goal ≥ ${DECISION_GOAL}×: ${decisionRatio >= DECISION_GOAL ? "met" : "MISSED"}); ` +
      `worst writ rep / best Cedar rep = ${(sWrit.min / sCedar.max).toFixed(0)}×`,
  );
  console.log(
    `                writ evaluation alone / Cedar evaluation alone (no schema) = ${(sEvaluate.median / sCedarBare.median).toFixed(0)}×; ` +
      `validation is ${((1e6 / sValidate.median / (1e6 / sWrit.median)) * 100).toFixed(0)}% of a writ decision`,
  );
  console.log(
    `  attestations: writ / bare Ed25519 sign+verify, median of the per-repetition ratios = ${(attestRatio * 100).toFixed(1)}% ` +
      `(goal ≥ ${ATTEST_GOAL * 100}%: ${attestRatio >= ATTEST_GOAL ? "met" : "MISSED"}); ratio of the medians ${rate(sAttest.median)} / ${rate(sBare.median)} = ` +
      `${(ratioOfMedians * 100).toFixed(1)}%; signing input ${payloadBytes.toFixed(0)} bytes on average`,
  );
  console.log(
    `                createAttestation costs ${overheadUs.toFixed(1)} µs more than sign+verify (${micros(sBare.median)}); ` +
      `attestationBody + the verifier's generic signingInput measured alone: ${accounted.toFixed(1)} µs (the signer writes the body's text without the generic walk); ` +
      `at 90% it could spend ${(1e6 / sBare.median / ATTEST_GOAL - 1e6 / sBare.median).toFixed(1)} µs`,
  );
  console.log(
    "  note: Cedar's schema checks types, required and undeclared attributes only (no ranges, enums or patterns); " +
      "writ's ajv schema checks all of them, so the writ side does more per decision",
  );
}

await main();
