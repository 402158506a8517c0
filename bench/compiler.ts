/**
 * Compiler benchmark (`npm run bench:compiler`, i.e. `tsx bench/compiler.ts`). Not a test: it prints numbers.
 *
 * A 1,000-rule policy from the seeded generator (compiler/test/support/generate-policy.ts, fixed seed) is
 * compiled, signed, written and loaded, each step timed over BENCH_RUNS runs (default 15) after warm-up.
 * Per the project's benchmark rule every number is set against something measured in the same run:
 *   - compile against the goal (at most 250 ms for a 1,000-rule policy);
 *   - loadBundle against the physical floor: read the same files, SHA-256 them and JSON.parse them;
 *   - optionally Cedar (@cedar-policy/cedar-wasm) parsing and validating 1,000 equivalent policies.
 * Medians are the figure to quote; the machine is shared, so single runs are noisy.
 *
 * Environment: BENCH_RUNS (default 15), BENCH_WARMUP (default 5), BENCH_SEED (default 20260401), BENCH_RULES (1000).
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, platform, arch, tmpdir } from "node:os";
import { join } from "node:path";
import { compile, type CompileResult, type PhaseName } from "@writ/compiler";
import {
  BUNDLE_FILES,
  MANIFEST_FILE,
  PAYLOAD_TYPES,
  SIGNATURE_FILE,
  createSignalValidator,
  generateSigningKeyPair,
  loadBundle,
  loadSigningKeyPem,
  parseStrictJson,
  preparePolicy,
  verifyObject,
  IR_OPERATORS,
  isArithOp,
  isComparison,
  isStringOp,
  type BundleManifest,
  type PolicyIr,
} from "@writ/runtime";
import type * as CedarModule from "@cedar-policy/cedar-wasm/nodejs";
import { operandsOf, type Expr, type ListItem, type PolicyAst, type ScalarValue, type SignalDecl } from "../compiler/src/syntax/ast.js";
import { generatePolicy } from "../compiler/test/support/generate-policy.js";

const RUNS = Number(process.env["BENCH_RUNS"] ?? 15);
const WARMUP = Number(process.env["BENCH_WARMUP"] ?? 5);
const SEED = Number(process.env["BENCH_SEED"] ?? 20_260_401);
const RULES = Number(process.env["BENCH_RULES"] ?? 1000);
const GOAL_MS = 250;

// ---------------------------------------------------------------------------------------------------------
// Measurement

interface Stats {
  readonly median: number;
  readonly p90: number;
  readonly min: number;
}

function stats(samples: readonly number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
  const mid = s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return { median: mid, p90: at(0.9), min: s[0]! };
}

async function measure(warmup: number, runs: number, f: () => unknown): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await f();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await f();
    samples.push(performance.now() - t0);
  }
  return samples;
}

const ms = (v: number) => `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ms`;
const rows: [string, Stats | null, string][] = [];
const row = (label: string, s: Stats | null, note = "") => rows.push([label, s, note]);

function printTable(): void {
  const w = Math.max(...rows.map(([l]) => l.length)) + 2;
  const col = (v: string) => v.padStart(11);
  console.log(`${"step".padEnd(w)}${col("median")}${col("p90")}${col("min")}`);
  console.log("-".repeat(w + 33));
  for (const [label, s, note] of rows) {
    console.log(`${label.padEnd(w)}${s ? col(ms(s.median)) + col(ms(s.p90)) + col(ms(s.min)) : "".padEnd(33)}${note ? `  ${note}` : ""}`);
  }
}

function assertValid(r: CompileResult): asserts r is CompileResult & { ir: PolicyIr; ast: PolicyAst } {
  if (!r.valid || !r.ir || !r.ast || !r.bundle) {
    throw new Error(
      `benchmark policy does not compile: ${r.errors
        .slice(0, 3)
        .map((e) => `${e.code} ${e.message}`)
        .join("; ")}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const source = generatePolicy({ seed: SEED, rules: RULES });
  const path = "bench/policy.writ";
  const first = compile(path, source);
  assertValid(first);
  const { ast, ir } = first;
  const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
  console.log(`writ compiler benchmark: ${RULES}-rule generated policy (seed ${SEED})`);
  console.log(
    `  ${Buffer.byteLength(source).toLocaleString("en")} bytes, ${source.split("\n").length.toLocaleString("en")} lines, ` +
      `${ast.signals.length} signals, ${ast.consts.length} constants, ${ast.rules.length} rules (${ir.rules.length} in the IR), ` +
      `${first.warnings.length} warnings`,
  );
  console.log(`  node ${process.version}, ${platform()} ${arch()}, ${cpus().length} × ${cpu}`);
  console.log(`  ${RUNS} runs after ${WARMUP} warm-up runs per step; the machine is shared and noisy: quote medians\n`);

  // 1. compile, all eight phases (emit without a key), with the per-phase breakdown from result.timings.
  const phaseSamples = new Map<PhaseName, number[]>();
  const compileSamples = await measure(WARMUP, RUNS, () => {
    const r = compile(path, source);
    for (const t of r.timings) phaseSamples.set(t.phase, [...(phaseSamples.get(t.phase) ?? []), t.ms]);
    return r;
  });
  // The warm-up runs also recorded phases: keep the last RUNS of each.
  const compileStats = stats(compileSamples);
  row("compile (8 phases, no key)", compileStats);
  for (const [phase, samples] of phaseSamples) row(`  ${phase}`, stats(samples.slice(-RUNS)));

  const checkStats = stats(await measure(WARMUP, RUNS, () => compile(path, source, { until: "analyze" })));
  row("check (lex .. analyze)", checkStats, "what `writ check` runs");

  // 2. compile + sign with a freshly generated key.
  const key = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);
  let signed: CompileResult = first;
  const signStats = stats(
    await measure(WARMUP, RUNS, () => {
      signed = compile(path, source, { signingKey: key });
      return signed;
    }),
  );
  assertValid(signed);
  if (!signed.bundle?.files.has(SIGNATURE_FILE)) throw new Error("signed bundle has no bundle.sig");
  row("compile + sign", signStats);

  // 3. write the bundle to a temp dir.
  const bundle = signed.bundle;
  const root = await mkdtemp(join(tmpdir(), "writ-bench-"));
  const dir = join(root, bundle.policyId, bundle.version);
  const writeStats = stats(
    await measure(WARMUP, RUNS, async () => {
      await mkdir(dir, { recursive: true });
      for (const [name, bytes] of bundle.files) await writeFile(join(dir, name), bytes);
    }),
  );
  row(
    "write bundle (temp dir)",
    writeStats,
    `${[...bundle.files.values()].reduce((n, b) => n + b.length, 0).toLocaleString("en")} bytes, ${bundle.files.size} files`,
  );

  // 4. loadBundle: hashes, bundle_hash, signature against the pinned key, strict JSON, ajv, prepare.
  const trust = { trustedKeys: [key.publicKey], requireSignature: true } as const;
  const loaded = await loadBundle(root, bundle.policyId, bundle.version, trust);
  if (loaded.signedBy !== key.keyId) throw new Error("loadBundle did not verify the signature");
  const loadStats = stats(await measure(WARMUP, RUNS, () => loadBundle(root, bundle.policyId, bundle.version, trust)));
  row("loadBundle (trusted key, requireSignature)", loadStats);

  // 5. The floor any loader pays: read the same files, SHA-256 each, JSON.parse the JSON ones.
  const names = [MANIFEST_FILE, BUNDLE_FILES.source, BUNDLE_FILES.schema, BUNDLE_FILES.ir, SIGNATURE_FILE];
  const floorStats = stats(
    await measure(WARMUP, RUNS, async () => {
      for (const name of names) {
        const bytes = await readFile(join(dir, name));
        createHash("sha256").update(bytes).digest("hex");
        if (name.endsWith(".json") || name === SIGNATURE_FILE) JSON.parse(bytes.toString("utf8"));
      }
    }),
  );
  row("floor: read + SHA-256 + JSON.parse", floorStats, "same files");

  // Where loadBundle's time goes beyond the floor (each measured alone).
  const manifest = JSON.parse(await readFile(join(dir, MANIFEST_FILE), "utf8")) as BundleManifest;
  const sig = JSON.parse(await readFile(join(dir, SIGNATURE_FILE), "utf8")) as { signature: string };
  const schemaText = await readFile(join(dir, BUNDLE_FILES.schema), "utf8");
  const irJson = JSON.parse(await readFile(join(dir, BUNDLE_FILES.ir), "utf8")) as PolicyIr;
  row(
    "  of which: verify signature",
    stats(await measure(WARMUP, RUNS, () => verifyObject(PAYLOAD_TYPES.bundle, manifest, sig.signature, [key.publicKey]))),
  );
  const irText = await readFile(join(dir, BUNDLE_FILES.ir), "utf8");
  row(
    "  of which: strict JSON parse of the IR",
    stats(await measure(WARMUP, RUNS, () => parseStrictJson(irText))),
    `${Buffer.byteLength(irText).toLocaleString("en")} bytes`,
  );
  // A fresh schema object each time, as loadBundle parses one: ajv caches compiled schemas per object.
  row(
    "  of which: ajv compile of the schema",
    stats(await measure(WARMUP, RUNS, () => createSignalValidator(JSON.parse(schemaText) as object))),
  );
  row("  of which: preparePolicy (IR to closures)", stats(await measure(WARMUP, RUNS, () => preparePolicy(irJson))));

  // 6. Optional peer: Cedar parsing and validating 1,000 equivalent policies.
  const cedar = await cedarPeer(ast, ir.governs.action);

  await rm(root, { recursive: true, force: true });
  printTable();

  console.log("\ncomparisons (same run):");
  const ratio = compileStats.median / GOAL_MS;
  console.log(
    `  goal:  compile median ${ms(compileStats.median)} / ${GOAL_MS} ms goal = ${ratio.toFixed(2)} ` +
      `(${ratio <= 1 ? "within the goal" : "OVER the goal"}; p90 ${ms(compileStats.p90)} = ${(compileStats.p90 / GOAL_MS).toFixed(2)})`,
  );
  console.log(
    `  floor: loadBundle median ${ms(loadStats.median)} / read+SHA-256+JSON.parse floor ${ms(floorStats.median)} = ` +
      `${(loadStats.median / floorStats.median).toFixed(1)}× the physical floor`,
  );
  if (cedar) {
    console.log(
      `  peer:  Cedar ${cedar.version} parse + validate of ${cedar.policies} equivalent policies: median ${ms(cedar.validate.median)} ` +
        `(parse alone ${ms(cedar.parse.median)}); writ check ${ms(checkStats.median)} = ${(checkStats.median / cedar.validate.median).toFixed(2)}× Cedar, ` +
        `writ compile ${ms(compileStats.median)} = ${(compileStats.median / cedar.validate.median).toFixed(2)}× Cedar`,
    );
    console.log(`         (${cedar.note})`);
  } else {
    console.log("  peer:  @cedar-policy/cedar-wasm not installed; Cedar comparison skipped");
  }
}

// ---------------------------------------------------------------------------------------------------------
// Cedar peer: the same 1,000 rules as Cedar policies against an equivalent schema

interface CedarResult {
  readonly version: string;
  readonly policies: number;
  readonly parse: Stats;
  readonly validate: Stats;
  readonly note: string;
}

async function cedarPeer(ast: PolicyAst, action: string): Promise<CedarResult | null> {
  let cedar: typeof CedarModule;
  try {
    cedar = await import("@cedar-policy/cedar-wasm/nodejs");
  } catch {
    return null;
  }
  const { schema, policies, approximations } = toCedar(ast, action);
  const policySet = { staticPolicies: policies };
  const parsed = cedar.checkParsePolicySet(policySet);
  if (parsed.type !== "success") throw new Error(`Cedar translation does not parse: ${JSON.stringify(parsed.errors.slice(0, 2))}`);
  const call = { schema, policies: policySet, validationSettings: { mode: "strict" as const } };
  const answer = cedar.validate(call);
  if (answer.type !== "success") throw new Error(`Cedar schema does not parse: ${JSON.stringify(answer.errors.slice(0, 2))}`);
  if (answer.validationErrors.length > 0) {
    const at = (answer.validationErrors[0]?.error as { sourceLocations?: { start: number; end: number }[] }).sourceLocations?.[0];
    throw new Error(
      `Cedar translation does not validate: ${JSON.stringify(answer.validationErrors.slice(0, 2))}\n${at ? policies.slice(at.start - 200, at.end + 50) : ""}`,
    );
  }
  const parse = stats(await measure(WARMUP, RUNS, () => cedar.checkParsePolicySet(policySet)));
  const validate = stats(await measure(WARMUP, RUNS, () => cedar.validate(call)));
  row(`cedar: parse ${ast.rules.length} policies`, parse, "@cedar-policy/cedar-wasm");
  row(`cedar: parse + validate (strict)`, validate);
  return {
    version: cedar.getCedarVersion(),
    policies: ast.rules.length,
    parse,
    validate,
    note:
      `one Cedar policy per writ rule, ${Buffer.byteLength(policies).toLocaleString("en")} bytes; constants inlined; numbers as Long; ` +
      `no Cedar equivalent for ${approximations.size > 0 ? [...approximations].join(", ") : "nothing"}, so those atoms are stand-ins of the same shape`,
  };
}

/** Translates the AST to Cedar: one policy per rule, context attributes for signals, guards for optional ones. */
function toCedar(ast: PolicyAst, action: string): { schema: string; policies: string; approximations: Set<string> } {
  const signals = new Map(ast.signals.map((s) => [s.name.name, s]));
  const consts = new Map(ast.consts.map((c) => [c.name.name, c]));
  const approximations = new Set<string>();
  const cedarType = (s: SignalDecl) =>
    s.type.kind === "number" || s.type.kind === "integer"
      ? "Long"
      : s.type.kind === "boolean"
        ? "Bool"
        : s.type.kind === "timestamp"
          ? "datetime"
          : "String";
  const attrs = ast.signals.map((s) => `${s.name.name}${s.optional ? "?" : ""}: ${cedarType(s)}`).join(", ");
  const schema = `entity User;\nentity Resource;\naction "${action}" appliesTo { principal: User, resource: Resource, context: { ${attrs} } };\n`;

  const str = (v: string) =>
    `"${[...v].map((c) => (c === '"' ? '\\"' : c === "\\" ? "\\\\" : c === "\n" ? "\\n" : c === "\t" ? "\\t" : c === "\r" ? "\\r" : c.codePointAt(0)! < 0x20 ? `\\u{${c.codePointAt(0)!.toString(16)}}` : c)).join("")}"`;
  const scalar = (v: ScalarValue, asTime: boolean): string => {
    if (typeof v === "number") return String(Math.trunc(v));
    if (typeof v === "boolean") return String(v);
    return asTime ? `datetime("${new Date(Date.parse(v)).toISOString()}")` : str(v);
  };
  const isTime = (e: Expr) => e.kind === "ref" && signals.get(e.name)?.type.kind === "timestamp";
  const item = (i: ListItem, asTime: boolean): string => {
    if (i.kind === "scalar") return scalar(i.value, asTime);
    const c = consts.get(i.name);
    return c?.value.kind === "scalar" ? scalar(c.value.value, asTime) : "0";
  };
  /** The optional signals an atom reads (not through `present`): Cedar's strict validator wants `has` first. */
  const optionalsIn = (e: Expr, out = new Set<string>()): Set<string> => {
    const visit = (x: Expr): void => {
      if (x.kind === "ref" && signals.get(x.name)?.optional) out.add(x.name);
      if (x.kind !== "call" || x.fn.name !== "present") operandsOf(x).forEach(visit);
    };
    visit(e);
    return out;
  };
  // Values: signals, inlined constants, literals, arithmetic.
  const value = (e: Expr, asTime = false): string => {
    switch (e.kind) {
      case "literal":
        return scalar(e.value, asTime);
      case "ref": {
        if (signals.has(e.name)) return `context.${e.name}`;
        const c = consts.get(e.name);
        return c?.value.kind === "scalar" ? scalar(c.value.value, asTime) : "0";
      }
      case "binary":
        if (!isArithOp(e.op)) return `(${condition(e)})`;
        if (e.op === "div") approximations.add("division");
        return `(${value(e.left)} ${e.op === "div" ? "*" : IR_OPERATORS[e.op].symbol} ${value(e.right)})`;
      case "unary":
        if (e.op === "not") return `(${condition(e)})`;
        return `(-${value(e.arg)})`;
      case "call":
        if (e.fn.name === "present") return `(${condition(e)})`;
        approximations.add("len()");
        return "1";
      default:
        return `(${condition(e)})`;
    }
  };
  const like = (e: Extract<Expr, { kind: "binary" }>): string => {
    const pattern = e.right.kind === "literal" && typeof e.right.value === "string" ? e.right.value : null;
    if (pattern === null) {
      approximations.add("string operators with a non-literal operand");
      return `${value(e.left)} == ${value(e.right)}`;
    }
    const p = str(pattern).slice(1, -1).replace(/\*/g, "\\*");
    return `${value(e.left)} like "${e.op === "starts_with" ? `${p}*` : e.op === "ends_with" ? `*${p}` : `*${p}*`}"`;
  };
  // Conditions, each atom guarded by `context has x` for the optional signals it reads.
  const condition = (e: Expr): string => {
    switch (e.kind) {
      case "logical":
        return e.args.map((a) => `(${condition(a)})`).join(e.op === "and" ? " && " : " || ");
      case "unary":
        if (e.op === "not") return `!(${condition(e.arg)})`;
        break;
      default:
        break;
    }
    const guards = [...optionalsIn(e)].map((n) => `context has ${n}`);
    const atom = ((): string => {
      switch (e.kind) {
        case "binary": {
          if (isStringOp(e.op)) return like(e);
          if (!isComparison(e.op)) return value(e);
          const t = isTime(e.left) || isTime(e.right);
          return `${value(e.left, t)} ${IR_OPERATORS[e.op].symbol} ${value(e.right, t)}`;
        }
        case "in": {
          const t = isTime(e.value);
          const items =
            e.set.kind === "list"
              ? e.set.items
              : ((s) =>
                  s.kind === "ref" && consts.get(s.name)?.value.kind === "list"
                    ? (consts.get(s.name)!.value as { items: readonly ListItem[] }).items
                    : [])(e.set);
          const test = items.length === 0 ? "false" : `[${items.map((i) => item(i, t)).join(", ")}].contains(${value(e.value, t)})`;
          return e.negated ? `!(${test})` : test;
        }
        case "range": {
          const test = `${value(e.value)} >= ${value(e.min)} && ${value(e.value)} <= ${value(e.max)}`;
          return e.negated ? `!(${test})` : test;
        }
        case "matches":
          approximations.add("matches /regex/");
          return `${value(e.value)} like "*"`;
        case "call":
          return e.fn.name === "present" && e.args[0]?.kind === "ref"
            ? signals.get(e.args[0].name)?.optional
              ? `context has ${e.args[0].name}`
              : "true"
            : "true";
        case "ref":
        case "literal":
          return value(e);
        default:
          return value(e);
      }
    })();
    return guards.length > 0 ? `${guards.join(" && ")} && (${atom})` : atom;
  };
  const policies = ast.rules
    .map((r) => {
      const effect = r.verdict === "approve" ? "permit" : "forbid";
      return `@id(${str(r.name.name)})\n@verdict(${str(r.verdict)})\n@reason(${str(r.reason.value)})\n${effect} (principal, action == Action::${str(action)}, resource)\nwhen { ${condition(r.when)} };\n`;
    })
    .join("\n");
  return { schema, policies, approximations };
}

await main();
