/**
 * `writ diff` as an author runs it: on the shipped payments policy and the version it replaced, on every shipped policy
 * against itself in each form it is read in, on schema changes, and with its exit codes, JSON output and help.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { preparePolicy, type PolicyIr } from "@writ/runtime";
import { compile } from "../../src/compile.js";
import { scratchCli } from "../support/cli-run.js";

const cli = scratchCli();
const PAY = "policies/payments.transfer/1.2.0";
/** The version 1.2.0 replaced, shipped beside it: `sanctioned` read only the bank's country, with another reason. */
const BEFORE = "policies/payments.transfer/1.1.0";
const SANCTIONED_IBAN = /^(CU|IR|KP|SY)[0-9]{2}/u;

function irOf(path: string): PolicyIr {
  const ir = compile(path, readFileSync(path, "utf8")).ir;
  if (!ir) throw new Error(`${path} does not compile`);
  return ir;
}

function json(): Record<string, unknown> & { regions: Region[]; undecided: unknown[]; signals: unknown[]; result: string } {
  expect(cli.out).toHaveLength(1);
  return JSON.parse(cli.out[0]!);
}

/** A region's pair of outcomes, a rule that faults marked. */
const pairOf = (r: Region): string => `${named(r.old)} -> ${named(r.new)}`;
const named = (o: Region["old"]): string => (o.verdict === "fault" ? `${o.rule} (fault)` : o.rule);

interface Region {
  old: { rule: string; verdict: string; reason: string | null };
  new: { rule: string; verdict: string; reason: string | null };
  witness: { signals: Record<string, unknown>; oldSignals?: Record<string, unknown>; validForBoth: boolean };
}

function write(name: string, text: string): string {
  writeFileSync(join(cli.cwd, name), text);
  return name;
}

const policy = (signals: string, rules: string) => `policy "p" version "1.0.0"\ngoverns "a"\nsignals {\n${signals}\n}\n${rules}\n`;

describe("writ diff on the shipped payments policy and the version it replaced", () => {
  const before = () => BEFORE;
  const OTHERS = [
    "high_risk",
    "no_kyc",
    "over_daily_limit",
    "new_account",
    "large",
    "unresolved_destination",
    "elevated_risk",
    "within_limits",
    "otherwise",
  ];

  it("reports the intended change: a sanctioned IBAN now rejects whatever rule decided before, and the reworded reason", async () => {
    expect(await cli.run("diff", before(), PAY, "--format", "json")).toBe(1);
    const diff = json();
    expect(diff).toMatchObject({ result: "different", governs: null, signals: [], undecided: [] });
    const pairs = diff.regions.map(pairOf);
    // `daily_total` has no upper bound in either version, so `daily_total + amount` can overflow and fault: before,
    // where no rule before it decides; now, a sanctioned IBAN is rejected first.
    expect(pairs.sort()).toEqual(
      ["sanctioned -> sanctioned", "over_daily_limit (fault) -> sanctioned", ...OTHERS.map((o) => `${o} -> sanctioned`)].sort(),
    );
    const [oldIr, newIr] = [irOf(join(cli.cwd, BEFORE, "policy.writ")), irOf(join(cli.cwd, PAY, "policy.writ"))];
    for (const r of diff.regions) {
      expect(r.witness.validForBoth).toBe(true);
      expect(r.new).toEqual({ rule: "sanctioned", verdict: "reject", reason: "destination is in a sanctioned country" });
      // Checked here again, with the runtime: each witness is decided as reported on both sides.
      expect(preparePolicy(oldIr).evaluate(r.witness.signals)).toMatchObject(
        r.old.verdict === "fault" ? { fault: { ruleId: r.old.rule, code: "EVAL-002" } } : { ruleId: r.old.rule, verdict: r.old.verdict },
      );
      expect(preparePolicy(newIr).evaluate(r.witness.signals)).toMatchObject({ ruleId: "sanctioned" });
      if (r.old.rule === "sanctioned") {
        expect(r.old.reason).toBe("destination country is under sanctions");
        expect(["CU", "IR", "KP", "SY"]).toContain(r.witness.signals["destination_country"]);
      } else {
        // Only the IBAN makes these sanctioned: the bank's country is not a sanctioned one, or unknown.
        expect(r.witness.signals["destination_account"]).toMatch(SANCTIONED_IBAN);
        expect(["CU", "IR", "KP", "SY"]).not.toContain(r.witness.signals["destination_country"]);
      }
    }
    const unresolved = diff.regions.find((r) => r.old.rule === "unresolved_destination")!;
    expect(unresolved.witness.signals).not.toHaveProperty("destination_country");
    expect(unresolved.witness.signals["amount"]).toBeGreaterThanOrEqual(5000);
  });

  it("prints the regions grouped by verdicts, each with its rules and witness", async () => {
    expect(await cli.run("diff", before(), PAY)).toBe(1);
    expect(cli.out[0]).toMatch(
      /^old: payments\.transfer@1\.1\.0 \(source `policies\/payments\.transfer\/1\.1\.0\/policy\.writ`, bundle_hash [0-9a-f]{16}…\)$/,
    );
    expect(cli.out[1]).toMatch(/^new: payments\.transfer@1\.2\.0 \(source `policies\/payments\.transfer\/1\.2\.0\/policy\.writ`/);
    const text = cli.out.join("\n");
    expect(text).toContain("decisions: 11 regions decided differently");
    expect(cli.out).toContain("  fault -> reject (1 region)");
    expect(cli.out).toContain("  reject -> reject (4 regions)");
    expect(cli.out).toContain("  escalate -> reject (5 regions)");
    expect(cli.out).toContain("  approve -> reject (1 region)");
    const at = cli.out.indexOf('    old `within_limits`: approve "verified customer within limits"');
    expect(cli.out[at + 1]).toBe('    new `sanctioned`: reject "destination is in a sanctioned country"');
    expect(cli.out[at + 2]).toMatch(/^ {6}witness: \{.*"destination_account":"(CU|IR|KP|SY)[0-9]{2}/);
    expect(cli.out.at(-1)).toBe("different");
  });

  it("the other way round: the same regions, sides swapped", async () => {
    expect(await cli.run("diff", PAY, before(), "--format", "json")).toBe(1);
    expect(json().regions.map(pairOf).sort()).toEqual(
      ["sanctioned -> sanctioned", "sanctioned -> over_daily_limit (fault)", ...OTHERS.map((o) => `sanctioned -> ${o}`)].sort(),
    );
  });
});

describe("writ diff finds every shipped policy equivalent to itself", () => {
  it.each(["payments.transfer/1.1.0", "payments.transfer/1.2.0", "deploy.production/1.0.0", "customer-data.export/1.0.0"])(
    "%s: source, bundle directory and archive",
    async (p) => {
      const path = `policies/${p}`;
      expect(await cli.run("compile", path)).toBe(0);
      expect(await cli.run("bundle", "pack", path, "--out", "archives")).toBe(0);
      const archive = `archives/${p.replace("/", "@")}.bundle.json`;
      cli.out.length = 0;
      expect(await cli.run("diff", `${path}/policy.writ`, path)).toBe(0);
      expect(cli.out.at(-1)).toBe("equivalent: same signals, and every request is decided alike");
      cli.out.length = 0;
      expect(await cli.run("diff", archive, `${path}/policy.writ`, "--format", "json")).toBe(0);
      expect(json()).toMatchObject({
        old: { from: "archive" },
        new: { from: "source" },
        result: "equivalent",
        signals: [],
        regions: [],
        undecided: [],
      });
    },
  );
});

describe("writ diff on schema changes", () => {
  it("lists signals added, removed and changed first, each change with a value only one version accepts", async () => {
    const old = write(
      "old.writ",
      policy(
        '  amount: number > 0 <= 1000\n  tier: "a" | "b"\n  memo?: string',
        'rule big when amount > 500 reject "big"\notherwise approve "ok"',
      ),
    );
    const next = write(
      "new.writ",
      policy(
        '  amount: number > 0 <= 800\n  tier: "a" | "b" | "c"\n  country: string matching /^[A-Z]{2}$/',
        'rule big when amount > 500 reject "big"\notherwise approve "ok"',
      ),
    );
    expect(await cli.run("diff", old, next, "--format", "json")).toBe(1);
    const diff = json();
    expect(diff.signals).toEqual([
      { signal: "amount", change: "changed", old: "amount: number > 0 <= 1000", new: "amount: number > 0 <= 800", oldOnly: { value: 801 } },
      { signal: "tier", change: "changed", old: 'tier: "a" | "b"', new: 'tier: "a" | "b" | "c"', newOnly: { value: "c" } },
      { signal: "memo", change: "removed", old: "memo?: string", new: null },
      { signal: "country", change: "added", old: null, new: "country: string matching /^[A-Z]{2}$/" },
    ]);
    // The rules decide alike wherever both schemas accept the request.
    expect(diff).toMatchObject({ result: "different", regions: [], undecided: [] });
    cli.out.length = 0;
    expect(await cli.run("diff", old, next)).toBe(1);
    expect(cli.out.slice(2, 10)).toEqual([
      "",
      "signals: 4 changes",
      "  ~ amount: number > 0 <= 1000  ->  amount: number > 0 <= 800",
      "      accepted by the old version only: 801",
      '  ~ tier: "a" | "b"  ->  tier: "a" | "b" | "c"',
      '      accepted by the new version only: "c"',
      "  - memo?: string   (removed)",
      "  + country: string matching /^[A-Z]{2}$/   (added)",
    ]);
  });

  it("declarations written differently that accept the same states are no change", async () => {
    const old = write("old.writ", policy("  n: integer > 0\n  s: string length 1..3", 'otherwise approve "ok"'));
    const next = write(
      "new.writ",
      policy("  n: integer >= 1 <= 9007199254740991\n  s: string matching /^[\\s\\S]{1,3}$/", 'otherwise approve "ok"'),
    );
    expect(await cli.run("diff", old, next, "--format", "json")).toBe(0);
    expect(json()).toMatchObject({ result: "equivalent", signals: [] });
  });

  it("a schema pattern it does not model: the declarations are said to differ, not how, and the result is undecided", async () => {
    const old = write(
      "old.writ",
      policy("  word: string matching /\\bok\\b/", 'rule r when word == "ok" reject "r"\notherwise approve "ok"'),
    );
    const next = write(
      "new.writ",
      policy("  word: string matching /\\bfine\\b/", 'rule r when word == "ok" reject "r"\notherwise approve "ok"'),
    );
    expect(await cli.run("diff", old, next, "--format", "json")).toBe(6);
    const diff = json();
    expect(diff).toMatchObject({ result: "undecided", regions: [] });
    expect(diff.signals).toEqual([
      {
        signal: "word",
        change: "changed",
        old: "word: string matching /\\bok\\b/",
        new: "word: string matching /\\bfine\\b/",
        undecided: "the pattern /\\bok\\b/ of `word`: the assertion `\\b` is not modelled",
      },
    ]);
  });

  it("a rule on a signal only the new version has: each version gets the signals it declares", async () => {
    const old = write("old.writ", policy("  n: integer", 'otherwise approve "ok"'));
    const next = write(
      "new.writ",
      policy("  n: integer\n  flagged: boolean", 'rule f when flagged reject "flagged"\notherwise approve "ok"'),
    );
    expect(await cli.run("diff", old, next, "--format", "json")).toBe(1);
    const [region] = json().regions;
    expect(region).toEqual({
      old: { rule: "otherwise", verdict: "approve", reason: "ok" },
      new: { rule: "f", verdict: "reject", reason: "flagged" },
      witness: { signals: { n: 0, flagged: true }, oldSignals: { n: 0 }, validForBoth: false },
    });
  });

  it("a signal retyped with no value in common is sent to each version as it declares it", async () => {
    const old = write("old.writ", policy("  code: integer", 'rule r when code > 3 reject "r"\notherwise approve "ok"'));
    const next = write("new.writ", policy('  code: "x" | "y"', 'rule r when code == "x" reject "r"\notherwise approve "ok"'));
    expect(await cli.run("diff", old, next, "--format", "json")).toBe(1);
    const diff = json();
    expect(diff.signals).toEqual([
      {
        signal: "code",
        change: "changed",
        old: "code: integer",
        new: 'code: "x" | "y"',
        oldOnly: { value: 0 },
        newOnly: { value: "x" },
        disjoint: true,
      },
    ]);
    for (const r of diff.regions) expect(r.witness.validForBoth).toBe(false);
    expect(diff.regions.map((r) => `${r.old.rule} -> ${r.new.rule}`).sort()).toEqual(["otherwise -> r", "r -> otherwise"]);
  });
});

describe("writ diff on conditions relating two enums", () => {
  it("decides them by every combination of values: `a != b` and `not (a == b)` are the same rule", async () => {
    const signals = '  a: "eu" | "us" | "apac"\n  b: "eu" | "us"\n  c?: boolean';
    const old = write("old.writ", policy(signals, 'rule r when a != b and c != true reject "r"\notherwise approve "ok"'));
    const next = write("new.writ", policy(signals, 'rule r when not (a == b) and not (c == true) reject "r"\notherwise approve "ok"'));
    expect(await cli.run("diff", old, next)).toBe(0);
    expect(cli.out.at(-1)).toBe("equivalent: same signals, and every request is decided alike");
  });

  it("finds the combinations that changed on the shipped export policy", async () => {
    const path = "policies/customer-data.export/1.0.0/policy.writ";
    const source = readFileSync(join(cli.cwd, path), "utf8");
    const edited = write("edited.writ", source.replace("destination_region != data_region", 'destination_region == "us"'));
    expect(await cli.run("diff", path, edited, "--format", "json")).toBe(1);
    const diff = json();
    expect(diff.undecided).toEqual([]);
    expect(new Set(diff.regions.map((r) => r.old.rule === "eu_transfer" || r.new.rule === "eu_transfer"))).toEqual(new Set([true]));
    for (const r of diff.regions) {
      const { data_region, destination_region } = r.witness.signals;
      expect(data_region).toBe("eu");
      // Old rejects a transfer to apac, new does not; new rejects one to the us, as old did.
      expect(destination_region).toBe("apac");
      expect(r.old.rule).toBe("eu_transfer");
    }
  });
});

describe("writ diff exit codes", () => {
  it("exits 6 and names the construct when a region can be neither shown nor ruled out", async () => {
    // `a * a < 0` never holds, but a signal read twice is not modelled: the region stays undecided.
    const old = write("old.writ", policy("  a: integer -1000..1000", 'rule neg when a * a < 0 reject "never"\notherwise approve "ok"'));
    const next = write("new.writ", policy("  a: integer -1000..1000", 'otherwise approve "ok"'));
    expect(await cli.run("diff", old, next)).toBe(6);
    // It cannot fault on these integers (the product stays within ±1000000, found by interval arithmetic), so the
    // region where it would fault is ruled out: one region is left.
    expect(cli.out.slice(-6)).toEqual([
      "could not decide: 1 region",
      '    old `neg`: reject "never"',
      '    new `otherwise`: approve "ok"',
      "      because of `(a * a) < 0`: arithmetic that reads a signal twice, or divides by it, is not modelled",
      "",
      "undecided: no difference found, but some regions could not be decided",
    ]);
    cli.out.length = 0;
    expect(await cli.run("diff", old, next, "--format", "json")).toBe(6);
    expect(json()).toMatchObject({
      result: "undecided",
      regions: [],
      undecided: [{ old: { rule: "neg", verdict: "reject" }, new: { rule: "otherwise" } }],
    });
  });

  it.each([
    [
      ["diff", "a.writ"],
      "writ: diff takes exactly two policies, the old version then the new: each a .writ file or its directory, a bundle directory or a .bundle.json archive",
    ],
    [
      ["diff", "a.writ", "b.writ", "c.writ"],
      "writ: diff takes exactly two policies, the old version then the new: each a .writ file or its directory, a bundle directory or a .bundle.json archive",
    ],
    [["diff", PAY, PAY, "--format", "xml"], "writ: diff: --format must be text or json, given `xml`"],
    [["diff", PAY, "nowhere"], "writ: `nowhere` does not exist"],
    [["diff", PAY, PAY, "--explain"], "writ: diff: unknown option `--explain` (see `writ help`)"],
  ])("refuses %j with exit 2 and one line", async (argv, message) => {
    expect(await cli.run(...argv)).toBe(2);
    expect(cli.err).toEqual([message]);
    expect(cli.out).toEqual([]);
  });

  it("exits 3 when a side does not compile, 5 when a bundle does not verify", async () => {
    write("bad.writ", 'policy "p" version "1.0.0"\ngoverns "a"\nsignals { n: integer }\nrule r when m > 1 reject "r"\n');
    expect(await cli.run("diff", PAY, "bad.writ")).toBe(3);
    expect(cli.err.at(-1)).toBe("writ: `bad.writ` does not compile");
    expect(await cli.run("compile", PAY)).toBe(0);
    writeFileSync(join(cli.cwd, PAY, "policy.writ"), `${readFileSync(join(cli.cwd, PAY, "policy.writ"), "utf8")}\n`);
    expect(await cli.run("diff", `${PAY}/policy.writ`, PAY)).toBe(5);
  });

  it("--help shows the command's usage", async () => {
    expect(await cli.run("diff", "--help")).toBe(0);
    expect(cli.out[0]).toMatch(/^usage: writ diff <old> <new> +compare two versions of a policy exactly/);
    expect(cli.out.join("\n")).toContain("--format F        text (default) or json");
  });
});
