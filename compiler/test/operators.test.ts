/**
 * The operator table (compiler/src/syntax/operators.ts with the runtime's ir/operators.ts) is what the language
 * reference documents: every operator's row is in docs/language.md, its precedence level's row names it, and its
 * example is a condition the compiler accepts and reads as that operator. A new operator's declaration therefore
 * fails here until the reference describes it and its example works end to end.
 */
import { readFileSync } from "node:fs";
import { IR_OPERATORS, isFunctionName, type IrOperatorName } from "@writ/runtime";
import { describe, expect, it } from "vitest";
import { compile } from "../src/compile.js";
import { operandsOf, type Expr } from "../src/syntax/ast.js";
import { OPERATORS, PRECEDENCE, type OperatorDoc } from "../src/syntax/operators.js";

const LANGUAGE = readFileSync(new URL("../../docs/language.md", import.meta.url), "utf8");
const NAMES = Object.keys(OPERATORS) as IrOperatorName[];

const table = (header: string, names: readonly IrOperatorName[]): string => {
  const row = (d: OperatorDoc) => `| ${d.written} | ${d.operands} | ${d.result} | ${d.example} |`;
  return [header, "|---|---|---|---|", ...names.map((n) => row(OPERATORS[n].doc))].join("\n");
};

/** The signals and constants the documented examples use. */
const POLICY = `policy "docs.examples" version "1.0.0"
governs "docs.example"
signals {
  kyc_verified: boolean
  encrypted: boolean
  risk_score: integer 0..100
  account_age_days: integer
  tier: "critical" | "standard"
  currency: "USD" | "EUR" | "GBP"
  region: string
  branch: string
  email: string
  purpose: string
  destination: string
  country?: string
  amount: number
  daily_total: number
  balance: number
  balance_change: integer
  used: number
  quota: number > 0
  requested_at: timestamp
  client_ip: ip
}
const DAILY_LIMIT = 25000
const FREEZE_START = "2025-12-19T17:00:00Z"
const AUTO_CURRENCIES = ["USD", "EUR"]
const HIGH = 90
const MAX_DROP = 500
const LIMIT = 10000
`;

function uses(e: Expr, name: IrOperatorName): boolean {
  const here =
    ((e.kind === "logical" || e.kind === "unary" || e.kind === "binary") && e.op === name) ||
    ((e.kind === "in" || e.kind === "range" || e.kind === "matches") && e.kind === name) ||
    (e.kind === "cidr" && name === "in_cidr") ||
    (e.kind === "call" && e.fn.name === name);
  return here || operandsOf(e).some((o) => uses(o, name));
}

describe("docs/language.md documents the operator table", () => {
  it("lists every operator, as declared, in the operators table", () => {
    const expected = table(
      "| operator | operands | result | example |",
      NAMES.filter((n) => !isFunctionName(n)),
    );
    expect(LANGUAGE, `replace the table under "### Operators" with:\n${expected}`).toContain(expected);
  });

  it("lists every built-in function, as declared, in the functions table", () => {
    const expected = table("| call | argument | result | example |", NAMES.filter(isFunctionName));
    expect(LANGUAGE, `replace the table under "### Functions" with:\n${expected}`).toContain(expected);
  });

  it("names each operator in the row of its precedence level", () => {
    const rows = new Map([...LANGUAGE.matchAll(/^\| (\d) \| (.*) \|.*\|$/gm)].map((m) => [Number(m[1]), m[2]!]));
    for (const name of NAMES) {
      const decl = OPERATORS[name];
      const level = "level" in decl ? decl.level : name === "and" || name === "or" ? name : "predicate";
      if (isFunctionName(name)) continue;
      expect(rows.get(PRECEDENCE[level]), `precedence level ${PRECEDENCE[level]} names \`${IR_OPERATORS[name].symbol}\``).toContain(
        `\`${IR_OPERATORS[name].symbol}\``,
      );
    }
  });
});

describe.each(NAMES)("the documented example of `%s`", (name) => {
  it("is a condition the compiler accepts and reads as that operator", () => {
    const example = OPERATORS[name].doc.example.replace(/^`|`$/g, "");
    const result = compile("docs.writ", `${POLICY}rule example when ${example} reject "shown in the docs"\n`);
    expect(result.errors.map((e) => e.message)).toEqual([]);
    expect(uses(result.ast!.rules[0]!.when, name)).toBe(true);
  });
});
