/**
 * Golden tests, one folder per phase: `compiler/test/phases/{phase}/{case}.writ` is compiled up to that phase
 * and what the phase produced (its own output, then every diagnostic rendered with its caret excerpt) is
 * compared with `{case}.golden` beside it. `UPDATE_GOLDEN=1 npx vitest run compiler/test/phases` rewrites
 * the golden files; review the diff before committing.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runPipeline } from "../../src/compile.js";
import { renderDiagnostic } from "../../src/diagnostics/diagnostic.js";
import { LineIndex, type Span } from "../../src/diagnostics/source.js";
import { PHASES, type PhaseName, type PipelineState } from "../../src/phases/index.js";
import { describeType } from "../../src/phases/expression-types.js";
import { signingKeyForTests } from "../support/keys.js";

const here = new URL(".", import.meta.url).pathname;
const update = process.env["UPDATE_GOLDEN"] === "1";

/** What each phase hands on, printed so a reviewer can read it. */
const snapshot: Record<PhaseName, (s: PipelineState) => string> = {
  lex: (s) => (s.tokens ?? []).map((t) => `${t.startLine}:${t.startColumn} ${t.tokenType.name} ${t.image}`).join("\n"),
  parse: (s) => (s.cst ? `policyFile with ${Object.keys(s.cst.children).sort().join(", ")}` : "no tree"),
  "build-ast": (s) => json(s.ast, (k, v) => (k === "span" && v ? compactSpan(v as Span) : v)),
  resolve: (s) =>
    s.symbols ? `signals: ${[...s.symbols.signals.keys()].join(", ")}\nconstants: ${[...s.symbols.consts.keys()].join(", ")}` : "",
  "type-check": (s) =>
    (s.ast?.rules ?? [])
      .map((r) => `rule ${r.name.name}: ${s.typing?.types.get(r.when) ? describeType(s.typing.types.get(r.when)!) : "untyped"}`)
      .join("\n"),
  analyze: () => "",
  lower: (s) => json(s.ir),
  emit: (s) =>
    s.bundle
      ? [...s.bundle.files]
          .map(([name, bytes]) => `== ${name}\n${name.endsWith(".writ") ? "(source)" : new TextDecoder().decode(bytes)}`)
          .join("\n")
      : "",
};

function json(v: unknown, replacer?: (k: string, v: unknown) => unknown): string {
  return v === undefined ? "" : JSON.stringify(v, replacer, 2);
}

function compactSpan(s: Span): string {
  return `${s.start.line}:${s.start.column}-${s.end.line}:${s.end.column}`;
}

function render(phase: PhaseName, file: string, text: string): string {
  const { state, diagnostics } = runPipeline(file, text, { until: phase, signingKey: signingKeyForTests() });
  const lines = new LineIndex(text);
  const diags = diagnostics.map((d) => renderDiagnostic(d, lines)).join("\n\n");
  return `${snapshot[phase](state)}\n--- diagnostics\n${diags || "(none)"}\n`;
}

describe.each(PHASES.map((p) => p.name))("phase %s", (phase) => {
  const dir = join(here, phase);
  const cases = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith(".writ"))
        .sort()
    : [];

  it("has golden cases of its own, accepted and refused", () => {
    expect(cases.length).toBeGreaterThanOrEqual(2);
  });

  it.each(cases)("%s", (name) => {
    const text = readFileSync(join(dir, name), "utf8");
    const actual = render(phase, `${phase}/${name}`, text);
    const goldenPath = join(dir, name.replace(/\.writ$/, ".golden"));
    if (update || !existsSync(goldenPath)) {
      if (!update) throw new Error(`missing ${goldenPath}: run with UPDATE_GOLDEN=1 to create it`);
      writeFileSync(goldenPath, actual);
    }
    expect(actual).toBe(readFileSync(goldenPath, "utf8"));
  });
});

it("phases run after the phases whose output they read", () => {
  const seen = new Set<string>();
  for (const p of PHASES) {
    for (const dep of p.after) expect(seen.has(dep), `${p.name} must run after ${dep}`).toBe(true);
    seen.add(p.name);
  }
  expect(PHASES.map((p) => p.name)).toEqual(["lex", "parse", "build-ast", "resolve", "type-check", "analyze", "lower", "emit"]);
});
