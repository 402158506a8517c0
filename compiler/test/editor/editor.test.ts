/**
 * The compiler's editor entry points on the shipped policies: every name resolves to its declaration, every
 * declared name has a hover, every rename round-trips into a policy that still compiles, completion never fails
 * at any position, and the lexicon covers every token of the lexer.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkSource,
  namesOf,
  compile,
  completionsAt,
  definitionAt,
  highlightSpans,
  hoverAt,
  KEYWORD_INFO,
  KEYWORDS,
  OPERATOR_INFO,
  OPERATORS,
  renameAt,
  type TextEdit,
} from "../../src/index.js";

const repo = new URL("../../../", import.meta.url).pathname;
const policies = readdirSync(join(repo, "policies"), { recursive: true, encoding: "utf8" })
  .filter((p) => p.endsWith("policy.writ"))
  .map((p) => ({ path: p, text: readFileSync(join(repo, "policies", p), "utf8") }));

function applyEdits(text: string, edits: readonly TextEdit[]): string {
  return [...edits]
    .sort((a, b) => b.range.start - a.range.start)
    .reduce((t, e) => t.slice(0, e.range.start) + e.newText + t.slice(e.range.end), text);
}

describe("the lexicon", () => {
  it("has a role and a doc for every keyword and every operator of the lexer's token table", () => {
    expect(Object.keys(KEYWORD_INFO).sort()).toEqual([...KEYWORDS].sort());
    expect([...OPERATORS].sort()).toEqual(Object.keys(OPERATOR_INFO).sort());
    for (const info of [...Object.values(KEYWORD_INFO), ...Object.values(OPERATOR_INFO)]) expect(info.doc).toMatch(/\S{3}/);
  });
});

describe.each(policies)("the editor entry points on $path", ({ path, text }) => {
  const check = checkSource(path, text);

  it("see the policy as `writ check` does", () => {
    expect(check.diagnostics).toEqual([...compile(path, text).errors, ...compile(path, text).warnings]);
    expect(check.symbols).not.toBeNull();
  });

  it("go from every use of a signal or constant to its declaration, and describe it", () => {
    const uses = check.symbols!.occurrences.filter((o) => !o.declaration && o.kind !== "function");
    expect(uses.length).toBeGreaterThan(10);
    for (const use of uses) {
      const target = definitionAt(check, use.span.start.offset + 1)!;
      expect(text.slice(target.start, target.end)).toBe(use.name);
      const declaredAt = check.symbols!.at(target.start)!;
      expect(declaredAt).toMatchObject({ name: use.name, kind: use.kind, declaration: true });
      expect(hoverAt(check, use.span.end.offset)!.markdown).toContain(use.name);
    }
  });

  it("rename every signal, constant and rule into a policy that compiles and renames back to the source", () => {
    const declared = check.symbols!.occurrences.filter((o) => o.declaration);
    for (const d of declared) {
      const renamed = renameAt(check, d.span.start.offset, `${d.name}_renamed`);
      if (!renamed.ok) throw new Error(renamed.message);
      const next = applyEdits(text, renamed.edits);
      expect(compile(path, next).valid, `${d.kind} ${d.name}`).toBe(true);
      const nextCheck = checkSource(path, next);
      const moved = nextCheck.symbols!.occurrences.find((o) => o.declaration && o.kind === d.kind && o.name === `${d.name}_renamed`)!;
      const back = renameAt(nextCheck, moved.span.start.offset, d.name);
      if (!back.ok) throw new Error(back.message);
      expect(applyEdits(next, back.edits)).toBe(text);
    }
  });

  it("complete at every position without failing, and only names that are declared", () => {
    const declared = new Set(check.symbols!.occurrences.filter((o) => o.declaration).map((o) => o.name));
    for (let offset = 0; offset <= text.length; offset += 5) {
      for (const c of completionsAt(check, offset)) {
        if (c.kind === "signal" || c.kind === "constant") expect(declared.has(c.label)).toBe(true);
      }
    }
  });
});

describe("completion in context", () => {
  const good =
    'policy "p" version "1.0.0"\ngoverns "a"\nsignals {\n  n: number\n  s: string\n}\nconst L = [1]\nrule a when n > 1 reject "x"\n';
  const names = namesOf(checkSource("p.writ", good));
  const labels = (text: string, offset = text.length): string =>
    completionsAt(checkSource("p.writ", text), offset, names)
      .map((c) => c.label)
      .join(" ");

  it("offers what the grammar allows next", () => {
    expect(labels("")).toBe("policy");
    expect(labels(`${good}rule b when s `)).toBe("starts_with ends_with contains not in in_cidr matches and or approve escalate reject");
    expect(labels(`${good}rule b when n > 2 reject "y"\n`)).toBe("rule otherwise");
    expect(labels(good, good.indexOf("const"))).toBe("const rule otherwise");
    expect(labels('policy "p" version "1.0.0"\ngoverns "a"\nsignals {\n  n: number\n  s: str')).toBe(
      "string number integer decimal boolean timestamp semver ip",
    );
  });

  it("completes within the section at the cursor when an earlier one does not parse", () => {
    expect(labels(`${good}rule b when n > > 2 reject "y"\nrule c when `)).toBe(
      "n s L len lower abs min max weekday local_hour local_minute_of_day present not true false now",
    );
  });

  it("offers nothing inside a string, a pattern, a comment or an unterminated string", () => {
    const text = `${good}rule b when s matches /ab/ reject "why" # note\nrule c when s == "op`;
    for (const inside of ["/ab/", '"why"', "# note"]) expect(labels(text, text.indexOf(inside) + 2), inside).toBe("");
    expect(labels(text)).toBe("");
  });
});

describe("durations in the editor", () => {
  const text = [
    'policy "d" version "1.0.0"',
    'governs "a"',
    "signals {",
    "  requested_at: timestamp",
    "  opened_at: timestamp",
    "}",
    "const GRACE = 15m",
    'rule new_account when requested_at < opened_at + 30d + GRACE escalate "new"',
    'otherwise approve "ok"',
    "",
  ].join("\n");
  const check = checkSource("d.writ", text);

  it("a duration literal's hover gives its milliseconds", () => {
    expect(check.diagnostics).toEqual([]);
    expect(hoverAt(check, text.indexOf("30d") + 1)!.markdown).toContain("duration `30d`: 2,592,000,000 ms");
  });

  it("a duration constant's hover names its type", () => {
    expect(hoverAt(check, text.lastIndexOf("GRACE") + 1)!.markdown).toContain("constant: duration");
  });
});

describe("now in the editor", () => {
  const text = [
    'policy "n" version "1.0.0"',
    'governs "a"',
    "signals {",
    "  deadline: timestamp",
    "}",
    'rule late when now > deadline escalate "late"',
    'otherwise approve "ok"',
    "",
  ].join("\n");
  const check = checkSource("n.writ", text);

  it("hover says `now` is the decision instant, a timestamp, and how it is set", () => {
    expect(check.diagnostics).toEqual([]);
    const markdown = hoverAt(check, text.indexOf("now") + 1)!.markdown;
    expect(markdown).toContain("the decision instant, a timestamp");
    expect(markdown).toContain("`issuedAt`");
    expect(markdown).toContain("`writ eval --now`");
  });

  it("completion offers `now` where a value may stand, typed timestamp, and not where a name is declared", () => {
    const at = text.indexOf("now >");
    const offered = completionsAt(check, at).find((c) => c.label === "now");
    expect(offered).toMatchObject({ kind: "keyword", detail: "timestamp" });
    expect(completionsAt(check, text.indexOf("deadline: t")).map((c) => c.label)).not.toContain("now");
  });

  it("is highlighted as the instant it is, not as a name", () => {
    const at = text.indexOf("now");
    expect(highlightSpans(text).find((h) => h.from === at)).toEqual({ from: at, to: at + 3, kind: "keyword-instant" });
  });

  it("`now` has no declaration to go to and cannot be renamed", () => {
    expect(definitionAt(check, text.indexOf("now") + 1)).toBeNull();
    const rename = renameAt(check, text.indexOf("now") + 1, "then");
    expect("edits" in rename ? rename.edits : []).toEqual([]);
  });
});

describe("calendar fields in the editor", () => {
  const text = [
    'policy "z" version "1.0.0"',
    'governs "a"',
    "signals {",
    "  requested_at: timestamp",
    "}",
    'const LONDON = "Europe/London"',
    'rule late when local_hour(requested_at, "America/New_York") > 17 escalate "late"',
    'rule weekend when weekday(requested_at, LONDON) >= 6 reject "weekend"',
    'otherwise approve "ok"',
    "",
  ].join("\n");
  const check = checkSource("z.writ", text);

  it("a field's hover gives its doc from the operator table", () => {
    expect(check.diagnostics).toEqual([]);
    const hover = hoverAt(check, text.indexOf("local_hour") + 2)!.markdown;
    expect(hover).toContain("local_hour(t, zone)");
    expect(hover).toContain("the hour of `t` on the zone's clock, 0 to 23");
  });

  it("a zone's hover gives its offset now and the tz release the bundle's table comes from", () => {
    const hover = hoverAt(check, text.indexOf("America/New_York") + 2)!.markdown;
    expect(hover).toMatch(/^time zone `America\/New_York`: UTC-0[45]:00 now \(tzdata [^)]+\)\./);
    expect(hover).toContain("from 1970-01-01 to 2100-01-01 (UTC), beyond which the field faults (EVAL-004)");
    expect(hoverAt(check, text.indexOf('"late"') + 2)).toBeNull();
  });

  it("completes zone names inside a field's zone argument, and nothing inside other strings", () => {
    const typed = `${text}rule x when weekday(requested_at, "Europe/Lon`;
    const zones = completionsAt(checkSource("z.writ", typed), typed.length);
    expect(zones.map((c) => c.label)).toEqual(["Europe/London"]);
    expect(zones[0]).toMatchObject({
      kind: "zone",
      detail: expect.stringMatching(/^UTC\+0[01]:00 now$/),
      replaces: { start: typed.length - "Europe/Lon".length, end: typed.length },
    });
    const empty = `${text}rule x when weekday(requested_at, "`;
    expect(completionsAt(checkSource("z.writ", empty), empty.length).length).toBeGreaterThan(400);
    const other = `${text}rule y when weekday(requested_at, LONDON) == 1 reject "Europe/Lon`;
    expect(completionsAt(checkSource("z.writ", other), other.length)).toEqual([]);
  });
});
