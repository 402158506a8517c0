/**
 * `npm run lint` refuses a file header over 12 lines and a figure in a comment (scripts/lib/comment-rules.ts), and
 * passes a header of 12 lines and a comment that gives a reason, settings and operators included.
 */
import { describe, expect, it } from "vitest";
import { checkComments, type CommentRule } from "../../scripts/lib/comment-rules.js";

const LIBRARIES = ["lmdb", "fastify", "semver", "@noble/ed25519"];
const rulesOf = (text: string): CommentRule[] => checkComments("fixture.ts", text, LIBRARIES).map((f) => f.rule);
const header = (lines: number): string => ["/**", ...Array.from({ length: lines - 2 }, (_, i) => ` * Reason ${i}.`), " */"].join("\n");
const CODE = "export const x = 1;\n";

describe("the header rule", () => {
  it("refuses a 20-line header, saying where, how long and what to do", () => {
    const [finding, ...rest] = checkComments("fixture.ts", `${header(20)}\n${CODE}`, LIBRARIES);
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({ line: 1, rule: "header-length" });
    expect(finding?.message).toContain("20 lines");
    expect(finding?.message).toContain("move the essay to the docs");
  });

  it("passes a 12-line header and refuses a 13-line one", () => {
    expect(rulesOf(`${header(12)}\n${CODE}`)).toEqual([]);
    expect(rulesOf(`${header(13)}\n${CODE}`)).toEqual(["header-length"]);
  });

  it("counts a run of // lines as one block, and a module doc written after the imports", () => {
    const slashes = Array.from({ length: 13 }, (_, i) => `// Reason ${i}.`).join("\n");
    expect(rulesOf(`${slashes}\n${CODE}`)).toEqual(["header-length"]);
    expect(rulesOf(`import { a } from "./a.js";\n${header(14)}\n${CODE}`)).toEqual(["header-length"]);
  });

  it("leaves long comments inside the code to the reader", () => {
    expect(rulesOf(`${CODE}function f(): void {\n${header(20)}\n}\n`)).toEqual([]);
  });
});

describe("the figure rules", () => {
  it("refuses a comment quoting 7%, on the line of the figure, pointing to docs/benchmarks.md", () => {
    const findings = checkComments("fixture.ts", `${CODE}/**\n * Compressed records:\n * about 7% more work.\n */\n`, LIBRARIES);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ line: 4, rule: "percentage" });
    expect(findings[0]?.message).toContain("docs/benchmarks.md");
  });

  it.each<[string, CommentRule]>([
    ["// sign 22 µs against 43", "sub-millisecond"],
    ["// about 0.15 ms less per claim", "sub-millisecond"],
    ["// 300 ns a lookup", "sub-millisecond"],
    ["// costs about 150,000 instructions a record", "instructions"],
    ["/* costs about 150,000\n * instructions a record */", "instructions"],
    ["// 414 K Ir", "instructions"],
    ["// Why (lmdb-js 3.5.6, node_modules/lmdb/write.js):", "library-version"],
    ["// in fastify 5.12 its timer is cleared", "library-version"],
    ["// measured with @noble/ed25519@3.2.0", "library-version"],
    ["// measured on node 20.20.2 and PostgreSQL 15.20", "library-version"],
    ["// 12 per cent slower", "percentage"],
  ])("refuses %j (%s)", (comment, rule) => {
    expect(rulesOf(`${CODE}${comment}\n`)).toEqual([rule]);
  });

  it.each([
    "// The statement timeout plus 1 s; checked every 500 ms (a setting, not a measurement).",
    "// A duration: `500ms`, `30s`, `30d`; the reserve is the larger of 256 MiB and a share of the disk.",
    "// The remainder of truncated division (`-7 % 3` is -1).",
    "// Inclusion proofs are RFC 9162 2.1.3 (PATH), consistency proofs 2.1.4 (PROOF).",
    "// SemVer 2.0.0 text, parsed by the `semver` package; `1.0.0-rc.1 < 1.0.0`.",
    "// The policy payments.transfer@1.2.0 and `payments.transfer` `1.2.0`; an address `10.0.0.1`.",
    '// One object literal, no spread: a spread cost V8 more per body (docs/benchmarks.md, "Runtime").',
  ])("passes a reasoned comment: %j", (comment) => {
    expect(rulesOf(`${CODE}${comment}\n`)).toEqual([]);
  });

  it("reads comments only, not strings or template literals", () => {
    expect(rulesOf('export const s = "7% and 22 µs";\nexport const t = `lmdb 3.5.6 ${s} 150,000 instructions`;\n')).toEqual([]);
  });
});
