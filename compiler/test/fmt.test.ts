/**
 * `writ fmt` is idempotent and meaning-preserving: formatting twice changes nothing more, and the formatted
 * policy compiles to the same IR (the IR carries no positions, so equal IR means equal decisions).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compile } from "../src/compile.js";
import { formatSource } from "../src/fmt/format.js";
import { createContext } from "../src/phases/context.js";
import { lex } from "../src/phases/lex.js";
import { policySource } from "./support/generate-policy.js";

const policiesRoot = new URL("../../policies/", import.meta.url).pathname;
const shipped = readdirSync(policiesRoot, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".writ"));

function formatted(text: string): string {
  const r = formatSource("p.writ", text);
  if (!r.ok) throw new Error(`not formattable: ${r.errors.map((e) => e.message).join("; ")}`);
  return r.text;
}

function assertFormatLaws(text: string): void {
  const once = formatted(text);
  expect(formatted(once)).toBe(once);
  const before = compile("p.writ", text, { until: "lower" });
  const after = compile("p.writ", once, { until: "lower" });
  expect(after.valid).toBe(before.valid);
  expect(after.ir).toEqual(before.ir);
  expect(after.warnings.map((w) => w.code)).toEqual(before.warnings.map((w) => w.code));
}

describe("shipped policies", () => {
  it.each(shipped)("%s is already in canonical form and formats to the same meaning", (file) => {
    const text = readFileSync(join(policiesRoot, file), "utf8");
    expect(formatted(text)).toBe(text);
    assertFormatLaws(text);
  });
});

it("keeps every comment and at most one blank line", () => {
  const text = [
    "# file header",
    "",
    "",
    'policy "c.demo" version "1.0.0"  # trailing on the header',
    'governs "a"',
    "signals {",
    "  # before n",
    "  n: integer",
    "  # closing the block",
    "}",
    "rule r when n > 1   # trailing on a rule",
    '  approve "x"',
    "# between rules",
    'otherwise reject "y"',
    "# at the end",
  ].join("\n");
  const out = formatted(text);
  for (const c of [
    "# file header",
    "# trailing on the header",
    "# before n",
    "# closing the block",
    "# trailing on a rule",
    "# between rules",
    "# at the end",
  ]) {
    expect(out).toContain(c);
  }
  expect(out).not.toMatch(/\n\n\n/);
  assertFormatLaws(text);
});

it("is idempotent and meaning-preserving on generated policies", () => {
  fc.assert(
    fc.property(policySource({ remainderAndBounds: true, now: true }), (text) => {
      assertFormatLaws(text);
    }),
    { numRuns: 300, seed: 20261122 },
  );
});

it("gives one layout whatever the whitespace between tokens", () => {
  fc.assert(
    fc.property(
      policySource({ remainderAndBounds: true, now: true }),
      fc.array(fc.constantFrom(" ", "  ", "\t", "\n", "\n    ", " \r\n"), { minLength: 1 }),
      (text, gaps) => {
        // Rebuilt from the tokens with other whitespace (comments dropped): the same policy, laid out anew.
        const { tokens } = lex(createContext("p.writ", text));
        const scrambled = tokens.map((t, i) => t.image + gaps[i % gaps.length]!).join("");
        const withoutComments = tokens.map((t) => t.image).join(" ");
        expect(formatted(scrambled)).toBe(formatted(withoutComments));
        assertFormatLaws(scrambled);
        expect(compile("p.writ", scrambled, { until: "lower" }).ir).toEqual(compile("p.writ", text, { until: "lower" }).ir);
      },
    ),
    { numRuns: 200, seed: 20261123 },
  );
});

it("keeps durations as written, in constants, lists and conditions", () => {
  const text = [
    'policy "d" version "1.0.0"',
    'governs "a"',
    "signals {",
    "  requested_at: timestamp",
    "  opened_at: timestamp",
    "}",
    "const GRACE   =   60m",
    "const WINDOWS = [500ms,30s , 12h]",
    'rule r when requested_at<opened_at+30d+GRACE or requested_at-opened_at in WINDOWS escalate "r"',
    'otherwise approve "ok"',
    "",
  ].join("\n");
  assertFormatLaws(text);
  const out = formatted(text);
  expect(out).toContain("const GRACE = 60m\n");
  expect(out).toContain("const WINDOWS = [500ms, 30s, 12h]\n");
  expect(out).toContain("when requested_at < opened_at + 30d + GRACE or requested_at - opened_at in WINDOWS");
});

it("writes `now` as written, parenthesized only where its operation needs it", () => {
  const text = [
    'policy "n" version "1.0.0"',
    'governs "a"',
    "signals {",
    "  deadline: timestamp",
    "  opened_at: timestamp",
    "}",
    'rule r when (now)>deadline or now-opened_at<30d and (now + 15m) > deadline escalate "r"',
    'otherwise approve "ok"',
    "",
  ].join("\n");
  assertFormatLaws(text);
  expect(formatted(text)).toContain("when now > deadline or now - opened_at < 30d and now + 15m > deadline escalate");
});

it("writes calendar fields as calls, their zone as written (a literal or a constant)", () => {
  const text = [
    'policy "z" version "1.0.0"',
    'governs "a"',
    "signals {",
    "  requested_at: timestamp",
    "}",
    'const LONDON="Europe/London"',
    'rule r when weekday( requested_at,LONDON )>=6 or local_hour(requested_at+30m ,"America/New_York") not in 9..16 escalate "r"',
    'rule m when local_minute_of_day(requested_at,   LONDON)<570 escalate "m"',
    'otherwise approve "ok"',
    "",
  ].join("\n");
  assertFormatLaws(text);
  const out = formatted(text);
  expect(out).toContain('const LONDON = "Europe/London"\n');
  expect(out).toContain('when weekday(requested_at, LONDON) >= 6 or local_hour(requested_at + 30m, "America/New_York") not in 9..16');
  expect(out).toContain("when local_minute_of_day(requested_at, LONDON) < 570");
});
