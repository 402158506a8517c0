/**
 * Habits from other languages (compiler/src/syntax/habits.ts): each mistake an author used to another language makes
 * gets one diagnostic, at the offending token's own line and column, whose message names what writ writes instead,
 * with a hint. What writ itself spells that way (`#` comments, `==`) is no habit and compiles as before.
 */
import { describe, expect, it } from "vitest";
import { compile } from "../src/compile.js";
import { HABITS } from "../src/syntax/habits.js";

/** Lines 1 to 8; a row's own line is usually line 9, then the catch-all. */
const HEAD = `policy "demo.habits" version "1.0.0"
governs "demo.act"
signals {
  n: integer
  ok: boolean
  s: string
  tier: "l1" | "l2"
}
`;
const TAIL = `otherwise approve "fine"\n`;
const withRule = (line: string): string => `${HEAD}${line}\n${TAIL}`;
const withSignals = (lines: string): string =>
  HEAD.replace("}\n", `${lines}\n}\n`) + `rule r when n > 1 and ok and s == "a" and tier == "l1" reject "x"\n${TAIL}`;

interface Row {
  /** The habit's name in syntax/habits.ts (`bare word` and `unquoted string` are the parser's and resolve's). */
  readonly habit: string;
  readonly source: string;
  readonly code: string;
  readonly message: string;
  readonly line: number;
  readonly column: number;
  /** The text the diagnostic underlines: the offending token itself. */
  readonly token: string;
  readonly hint: string;
  /** True when this is the policy's only diagnostic: the parser went on with writ's spelling, so nothing cascades. */
  readonly alone: boolean;
}

const ROWS: readonly Row[] = [
  {
    habit: "slash comment",
    source: `// payments policy\n${HEAD}${TAIL}`,
    code: "E201",
    message: "comments start with `#`",
    line: 1,
    column: 1,
    token: "// payments policy",
    hint: "from `#` to the end of the line",
    alone: true,
  },
  {
    habit: "slash comment",
    source: withRule(`rule r when n > 1 reject "x" // too many`),
    code: "E201",
    message: "comments start with `#`",
    line: 9,
    column: 30,
    token: "// too many",
    hint: "`#`",
    alone: true,
  },
  {
    habit: "&&",
    source: withRule(`rule r when n > 1 && ok reject "x"`),
    code: "E101",
    message: "`&&` is not an operator: write `and`",
    line: 9,
    column: 19,
    token: "&&",
    hint: "`and`, `or` and `not`",
    alone: true,
  },
  {
    habit: "||",
    source: withRule(`rule r when n > 1 || ok reject "x"`),
    code: "E201",
    message: "`||` is not an operator: write `or`",
    line: 9,
    column: 19,
    token: "||",
    hint: "`and`, `or` and `not`",
    alone: true,
  },
  {
    habit: "!",
    source: withRule(`rule r when !ok reject "x"`),
    code: "E101",
    message: "`!` is not an operator: write `not`",
    line: 9,
    column: 13,
    token: "!",
    hint: "`!=`",
    alone: true,
  },
  {
    habit: "!",
    source: withRule(`rule r when n > 1 and !(s == "a") reject "x"`),
    code: "E101",
    message: "write `not`",
    line: 9,
    column: 23,
    token: "!",
    hint: "`not`",
    alone: true,
  },
  {
    habit: "= to compare",
    source: withRule(`rule r when n = 1 reject "x"`),
    code: "E201",
    message: "`=` does not compare: write `==`",
    line: 9,
    column: 15,
    token: "=",
    hint: "`const LIMIT = 100`",
    alone: true,
  },
  {
    habit: "= to compare",
    source: withRule(`rule r when ok and s = "a" reject "x"`),
    code: "E201",
    message: "write `==`",
    line: 9,
    column: 22,
    token: "=",
    hint: "`=` only gives a constant its value",
    alone: true,
  },
  {
    habit: "strict equality",
    source: withRule(`rule r when s === "a" reject "x"`),
    code: "E201",
    message: "`===` is not an operator: write `==`",
    line: 9,
    column: 15,
    token: "===",
    hint: "never convert",
    alone: true,
  },
  {
    habit: "strict inequality",
    source: withRule(`rule r when s !== "a" reject "x"`),
    code: "E201",
    message: "`!==` is not an operator: write `!=`",
    line: 9,
    column: 15,
    token: "!==",
    hint: "never convert",
    alone: true,
  },
  {
    habit: "regular expression flags",
    source: withRule(`rule r when s matches /^abc/i reject "x"`),
    code: "E201",
    message: "regular expressions take no flags: remove `i`",
    line: 9,
    column: 29,
    token: "i",
    hint: "`/[Cc]asino/`",
    alone: true,
  },
  // Reported on the pattern's own line, not as "expected `:`" on the next signal's.
  {
    habit: "regular expression flags",
    source: withSignals(`  code: string matching /^[a-z]+$/gi\n  other: string`).replace(
      's == "a"',
      'code == "a" and other == "b" and s == "a"',
    ),
    code: "E201",
    message: "remove `gi` after the closing `/`",
    line: 8,
    column: 35,
    token: "gi",
    hint: "JavaScript's `u` flag",
    alone: true,
  },
  {
    habit: "single quotes",
    source: withRule(`rule r when s == 'admin' reject "x"`),
    code: "E101",
    message: 'strings are written in double quotes: write `"admin"`',
    line: 9,
    column: 18,
    token: "'admin'",
    hint: 'only `"` delimits a string',
    alone: true,
  },
  {
    habit: "bare word",
    source: withRule(`rule r when n > 1 reject too_big`),
    code: "E201",
    message: 'expected a string, found `too_big`; strings are written in double quotes: `"too_big"`',
    line: 9,
    column: 26,
    token: "too_big",
    hint: "a string value is always quoted",
    alone: true,
  },
  {
    habit: "bare word",
    source: withSignals(`  region: eu | us`),
    code: "E201",
    message: 'strings are written in double quotes: `"eu"`',
    line: 8,
    column: 11,
    token: "eu",
    hint: "`eu` is read as a name",
    alone: false,
  },
  {
    habit: "bare word",
    source: `${HEAD}const REGION = eu\nrule r when n > 1 and ok and s == REGION and tier == "l1" reject "x"\n${TAIL}`,
    code: "E201",
    message: 'strings are written in double quotes: `"eu"`',
    line: 9,
    column: 16,
    token: "eu",
    hint: "read as a name",
    alone: true,
  },
  {
    habit: "unquoted string",
    source: withRule(`rule r when tier == l1 reject "x"`),
    code: "E404",
    message: 'unknown name `l1`; a string is written in double quotes: `"l1"`',
    line: 9,
    column: 21,
    token: "l1",
    hint: "one of the values of `tier`",
    alone: true,
  },
  {
    habit: "unquoted string",
    source: withRule(`rule r when n > 1 and tier in ["l1", l2] reject "x"`),
    code: "E404",
    message: 'written in double quotes: `"l2"`',
    line: 9,
    column: 38,
    token: "l2",
    hint: 'did you mean the string `"l2"`',
    alone: true,
  },
  {
    habit: "unquoted string",
    source: withRule(`rule r when s starts_with admin reject "x"`),
    code: "E404",
    message: 'unknown name `admin`; a string is written in double quotes: `"admin"`',
    line: 9,
    column: 27,
    token: "admin",
    hint: 'did you mean the string `"admin"`?',
    alone: false,
  },
];

describe("a habit from another language gets writ's spelling, at its own line and column, with a hint", () => {
  it.each(ROWS.map((r) => [`${r.habit}: ${r.token}`, r] as const))("%s", (_, row) => {
    const result = compile("policy.writ", row.source);
    expect(result.valid).toBe(false);
    const d = result.errors.find((e) => e.message.includes(row.message));
    expect(d, `no error says "${row.message}"; got ${JSON.stringify(result.errors.map((e) => e.message))}`).toBeDefined();
    expect(d!.code).toBe(row.code);
    expect([d!.span.start.line, d!.span.start.column]).toEqual([row.line, row.column]);
    expect(row.source.slice(d!.span.start.offset, d!.span.end.offset)).toBe(row.token);
    expect(d!.notes ?? []).toEqual([expect.stringContaining(row.hint)]);
    if (row.alone) expect(result.errors.map((e) => e.message)).toEqual([d!.message]);
  });

  it("covers every habit of the table", () => {
    const covered = new Set(ROWS.map((r) => r.habit));
    for (const h of HABITS) expect(covered.has(h.name), h.name).toBe(true);
  });

  it("goes on as if writ's spelling had been written: the other mistakes of the policy are still reported", () => {
    const result = compile("policy.writ", withRule(`rule r when n > 1 && ok || s === "a" reject too_big`));
    expect(result.errors.map((e) => [e.code, e.span.start.column, e.message.split(":")[0]])).toEqual([
      ["E101", 19, "`&&` is not an operator"],
      ["E201", 25, "`||` is not an operator"],
      ["E201", 30, "`===` is not an operator"],
      ["E201", 45, "expected a string, found `too_big`; strings are written in double quotes"],
    ]);
  });
});

describe("what writ itself spells that way is no habit", () => {
  const ok = (source: string) => {
    const result = compile("policy.writ", source);
    expect(result.errors).toEqual([]);
    return result.ir;
  };

  it.each([
    [
      "`#` comments",
      `# payments policy\n${HEAD}# the one rule\nrule r when n > 1 and ok and s == "a" and tier == "l1" reject "x" # too many\n${TAIL}`,
    ],
    ["`==` and `!=`", withRule(`rule r when n == 1 and ok != false and s == "a" and tier != "l2" reject "x"`)],
    [
      "`=` giving a constant its value",
      `${HEAD}const LIMIT = 100\nrule r when n > LIMIT and ok and s == "a" and tier == "l1" reject "x"\n${TAIL}`,
    ],
    ["a keyword glued to a pattern", withRule(`rule r when s matches /a/and n > 1 or s matches /b/or ok and tier == "l1" reject "x"`)],
    [
      "a signal named like a flag, glued to a pattern",
      withSignals(`  code: string matching /x/m: integer`).replace('s == "a"', 'code == "a" and m == 1 and s == "a"'),
    ],
    [
      "`//`, `'`, `&&` and `=` inside strings and patterns",
      withRule(`rule r when s == "a // b 'c' && d = e" and s matches /a\\/\\/b/ and n > 1 and ok and tier == "l1" reject "x"`),
    ],
  ])("%s", (_, source) => {
    ok(source);
  });

  it("a misspelt name compared with a string is still a misspelling, not a string", () => {
    const result = compile("policy.writ", withRule(`rule r when tierr == "l1" and n > 1 and ok and s == "a" reject "x"`));
    expect(result.errors.map((e) => [e.code, e.message, e.notes])).toEqual([["E404", "unknown name `tierr`", ["did you mean `tier`?"]]]);
  });
});
