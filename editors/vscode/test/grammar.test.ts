/**
 * The TextMate grammar as VS Code runs it (vscode-textmate with the Oniguruma engine): the shipped policies
 * tokenized with the scopes a theme colours, and every keyword and operator of the lexer covered.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { KEYWORD_INFO, OPERATOR_INFO, OPERATORS } from "@writ/compiler";
import { beforeAll, describe, expect, it } from "vitest";
import oniguruma from "vscode-oniguruma";
import textmate from "vscode-textmate";
import { SCOPES, writGrammar } from "../src/grammar.js";

const require = createRequire(import.meta.url);
const repo = new URL("../../../", import.meta.url).pathname;

interface Token {
  readonly text: string;
  readonly scopes: readonly string[];
}

let grammar: textmate.IGrammar;

beforeAll(async () => {
  await oniguruma.loadWASM(readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm")));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => (scope === "source.writ" ? textmate.parseRawGrammar(JSON.stringify(writGrammar()), "writ.json") : null),
  });
  grammar = (await registry.loadGrammar("source.writ"))!;
});

function tokenize(text: string): Token[][] {
  let state = textmate.INITIAL;
  return text.split("\n").map((line) => {
    const r = grammar.tokenizeLine(line, state);
    state = r.ruleStack;
    // Adjacent tokens with the same scopes are one (vscode-textmate splits a string at its quotes).
    const merged: Token[] = [];
    for (const t of r.tokens) {
      const text = line.slice(t.startIndex, t.endIndex);
      const last = merged[merged.length - 1];
      if (last && last.scopes.join() === t.scopes.join()) merged[merged.length - 1] = { text: last.text + text, scopes: t.scopes };
      else merged.push({ text, scopes: t.scopes });
    }
    return merged;
  });
}

/** The innermost scope of each non-blank token, as `text scope`. */
const scoped = (lines: Token[][]): string[] =>
  lines
    .flat()
    .filter((t) => t.text.trim() !== "")
    .map((t) => `${t.text.trim()} ${t.scopes[t.scopes.length - 1]}`);

const policies = readdirSync(join(repo, "policies"), { recursive: true, encoding: "utf8" })
  .filter((p) => p.endsWith("policy.writ"))
  .map((p) => ({ path: p, text: readFileSync(join(repo, "policies", p), "utf8") }));

describe("the writ TextMate grammar", () => {
  it("tokenizes the shipped policies with the scopes of their keywords, names, literals and comments", () => {
    expect(policies.map((p) => p.path).sort()).toEqual([
      "customer-data.export/1.0.0/policy.writ",
      "deploy.production/1.0.0/policy.writ",
      "deploy.production/1.1.0/policy.writ",
      "payments.transfer/1.1.0/policy.writ",
      "payments.transfer/1.2.0/policy.writ",
      "payments.transfer/1.3.0/policy.writ",
      "payments.transfer/1.4.0/policy.writ",
    ]);
    const payments = scoped(tokenize(policies.find((p) => p.path === "payments.transfer/1.2.0/policy.writ")!.text));
    for (const expected of [
      "# Money transfers out of customer accounts. comment.line.number-sign.writ",
      "policy keyword.other.declaration.writ",
      '"payments.transfer" string.quoted.double.writ',
      "binding keyword.other.declaration.writ",
      "amount variable.other.signal.writ",
      ": punctuation.separator.writ",
      "> keyword.operator.comparison.writ",
      "1000000 constant.numeric.writ",
      "| keyword.operator.enum.writ",
      "matching keyword.other.constraint.writ",
      "/^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/ string.regexp.writ",
      "boolean support.type.writ",
      "0 constant.numeric.writ",
      ".. keyword.operator.range.writ",
      "? keyword.operator.optional.writ",
      "SANCTIONED variable.other.constant.writ",
      "= keyword.operator.assignment.writ",
      "[ punctuation.section.brackets.writ",
      "sanctioned entity.name.function.rule.writ",
      "when keyword.other.declaration.writ",
      "in keyword.operator.word.writ",
      "or keyword.operator.logical.writ",
      "matches keyword.operator.word.writ",
      "/^(CU|IR|KP|SY)[0-9]{2}/ string.regexp.writ",
      "reject keyword.control.verdict.writ",
      "not keyword.operator.logical.writ",
      "+ keyword.operator.arithmetic.writ",
      "present support.function.builtin.writ",
      "otherwise keyword.other.declaration.writ",
      "escalate keyword.control.verdict.writ",
    ]) {
      expect(payments).toContain(expected);
    }
  });

  it("leaves no token of a shipped policy unscoped, and reads `#` in a string as text", () => {
    for (const p of policies) {
      const unscoped = tokenize(p.text)
        .flat()
        .filter((t) => t.text.trim() !== "" && t.scopes.length === 1);
      expect(unscoped, p.path).toEqual([]);
    }
    expect(scoped(tokenize('rule r when s == "a # b" reject "r" # c'))).toEqual([
      "rule keyword.other.declaration.writ",
      "r entity.name.function.rule.writ",
      "when keyword.other.declaration.writ",
      "s variable.other.signal.writ",
      "== keyword.operator.comparison.writ",
      '"a # b" string.quoted.double.writ',
      "reject keyword.control.verdict.writ",
      '"r" string.quoted.double.writ',
      "# c comment.line.number-sign.writ",
    ]);
  });

  it("gives every keyword of the lexer the scope of its role, whole words only", () => {
    for (const [word, info] of Object.entries(KEYWORD_INFO)) {
      expect(scoped(tokenize(word)), word).toEqual([`${word} ${SCOPES.keyword[info.role]}`]);
      expect(scoped(tokenize(`${word}x`)), word).toEqual([`${word}x ${SCOPES.signalName}`]);
    }
  });

  it("gives every operator of the lexer's token table the scope of its role, the longest match first", () => {
    expect(OPERATORS.length).toBeGreaterThan(20);
    expect(new Set(OPERATORS)).toEqual(new Set(Object.keys(OPERATOR_INFO)));
    const line = OPERATORS.join(" ");
    expect(scoped(tokenize(line))).toEqual(OPERATORS.map((op) => `${op} ${SCOPES.operator[OPERATOR_INFO[op]!.role]}`));
    expect(scoped(tokenize("a==b<=c"))).toEqual([
      `a ${SCOPES.signalName}`,
      `== ${SCOPES.operator.comparison}`,
      `b ${SCOPES.signalName}`,
      `<= ${SCOPES.operator.comparison}`,
      `c ${SCOPES.signalName}`,
    ]);
  });

  it("marks string escapes, and a bad escape as invalid", () => {
    expect(scoped(tokenize('"a\\n-\\u00e9\\q"'))).toEqual([
      '"a string.quoted.double.writ',
      "\\n constant.character.escape.writ",
      "- string.quoted.double.writ",
      "\\u00e9 constant.character.escape.writ",
      "\\q invalid.illegal.escape.writ",
      '" string.quoted.double.writ',
    ]);
  });
});
