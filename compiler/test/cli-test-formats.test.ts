/**
 * `writ test` for policy authors: shared base signals with per-case overrides, the static check that each expected
 * rule exists, and reports for machines: one JSON document, and JUnit XML validated against the format CI systems
 * read (compiler/test/support/junit.xsd, with libxml2's validator).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { validateXML } from "xmllint-wasm";
import { describe, expect, it } from "vitest";
import { scratchCli } from "./support/cli-run.js";

const cli = scratchCli();
const PAY = "policies/payments.transfer/1.2.0";
const DEPLOY = "policies/deploy.production/1.0.0";
const JUNIT_XSD = readFileSync(new URL("./support/junit.xsd", import.meta.url), "utf8");

/** A customer within limits; each case below changes what it is about. */
const BASE = {
  amount: 250,
  currency: "USD",
  destination_account: "DE89370400440532013000",
  kyc_verified: true,
  risk_score: 20,
  daily_total: 1000,
  account_age_days: 400,
  destination_country: "DE",
};

function writeTests(dir: string, file: unknown): void {
  writeFileSync(join(cli.cwd, dir, "policy.test.json"), typeof file === "string" ? file : JSON.stringify(file, null, 2));
}

describe("base signals", () => {
  it("each case sends the file's baseSignals, with its own signals over them and its `without` removed", async () => {
    writeTests(PAY, {
      baseSignals: BASE,
      cases: [
        { name: "the base alone is approved", expect: { verdict: "approve", rule: "within_limits" } },
        { name: "an override decides", signals: { risk_score: 95 }, expect: { verdict: "reject", rule: "high_risk" } },
        {
          name: "an added signal is sent",
          signals: { daily_total: 24900, amount: 200 },
          expect: { verdict: "escalate", rule: "over_daily_limit" },
        },
        {
          name: "without removes an optional signal",
          without: ["destination_country"],
          signals: { amount: 6000 },
          expect: { verdict: "escalate", rule: "unresolved_destination" },
        },
        { name: "without removes a required one", without: ["currency"], expect: { invalid: ["VAL-004"] } },
      ],
    });
    expect(await cli.run("test", PAY, "--verbose")).toBe(0);
    expect(cli.out[0]).toMatch(/: 5\/5 cases passed/);
  });

  it.each([
    [
      { baseSignals: BASE, cases: [{ name: "a", without: ["nickname"], expect: { verdict: "approve" } }] },
      "`$.cases[0].without` names `nickname`, which `$.baseSignals` does not have",
    ],
    [
      { baseSignals: BASE, cases: [{ name: "a", without: ["amount"], signals: { amount: 1 }, expect: { verdict: "approve" } }] },
      "`$.cases[0]` both removes and sends `amount`: drop it from `without` or from `signals`",
    ],
    [
      { baseSignals: BASE, cases: [{ name: "a", without: "amount", expect: { verdict: "approve" } }] },
      "`$.cases[0].without` must be a list of signal names from `$.baseSignals`",
    ],
    [{ baseSignals: [1], cases: [{ name: "a", expect: { verdict: "approve" } }] }, "`$.baseSignals` must be a JSON object"],
    // Without base signals, a case must give its signals, and `without` means nothing.
    [{ cases: [{ name: "a", expect: { verdict: "approve" } }] }, "`$.cases[0].signals` must be a JSON object"],
    [
      { cases: [{ name: "a", signals: {}, without: [], expect: { verdict: "approve" } }] },
      "`$.cases[0]` has unknown member `without` (expected `name`, `signals`, `now`, `expect`)",
    ],
  ])("a malformed file is refused with its path: %j", async (file, message) => {
    writeTests(PAY, file);
    expect(await cli.run("test", PAY)).toBe(4);
    expect(cli.err).toContain(`${PAY}/policy.test.json: ${message}`);
  });
});

describe("expected rules are checked before anything runs", () => {
  it("names each case that expects a rule the policy lacks, with a near miss", async () => {
    writeTests(PAY, {
      baseSignals: BASE,
      cases: [
        { name: "fine", expect: { verdict: "approve", rule: "within_limits" } },
        { name: "typo", signals: { risk_score: 95 }, expect: { verdict: "reject", rule: "hihg_risk" } },
        { name: "made up", expect: { verdict: "approve", rule: "vip_customer" } },
      ],
    });
    expect(await cli.run("test", PAY)).toBe(4);
    expect(cli.out).toEqual([]);
    expect(cli.err.slice(0, 2)).toEqual([
      `${PAY}/policy.test.json: case \`typo\` (\`$.cases[1]\`) expects rule \`hihg_risk\`, which the policy does not have; did you mean \`high_risk\`?`,
      `${PAY}/policy.test.json: case \`made up\` (\`$.cases[2]\`) expects rule \`vip_customer\`, which the policy does not have`,
    ]);
  });

  it("`otherwise` only when the policy has one", async () => {
    writeFileSync(
      join(cli.cwd, "p.writ"),
      'policy "p" version "1.0.0"\ngoverns "a"\nsignals {\n  n: integer\n}\nrule big when n > 10 reject "big"\n',
    );
    writeFileSync(
      join(cli.cwd, "p.test.json"),
      JSON.stringify({ cases: [{ name: "small", signals: { n: 1 }, expect: { verdict: "undecided", rule: "otherwise" } }] }),
    );
    expect(await cli.run("test", "p.writ")).toBe(4);
    expect(cli.err[0]).toBe("p.test.json: case `small` (`$.cases[0]`) expects rule `otherwise`, but the policy has no `otherwise`");
  });
});

describe("--format json", () => {
  it("prints one document: every policy's cases, coverage and status, then the totals", async () => {
    const tests = JSON.parse(readFileSync(join(cli.cwd, PAY, "policy.test.json"), "utf8")) as { cases: { expect: { verdict?: string } }[] };
    tests.cases.find((c) => c.expect.verdict === "approve")!.expect.verdict = "reject";
    writeTests(PAY, tests);
    rmSync(join(cli.cwd, DEPLOY, "policy.test.json"));
    expect(await cli.run("test", "policies", "--format", "json")).toBe(4);
    expect(cli.out).toHaveLength(1);
    const report = JSON.parse(cli.out[0]!) as { policies: Record<string, unknown>[]; passed: number; failed: number; errors: number };
    expect({ passed: report.passed, failed: report.failed, errors: report.errors }).toEqual({ passed: 5, failed: 1, errors: 1 });
    const byName = new Map(report.policies.map((p) => [p["suite"], p]));
    expect(byName.get("deploy.production@1.0.0")).toEqual({
      policy: `${DEPLOY}/policy.writ`,
      testFile: `${DEPLOY}/policy.test.json`,
      suite: "deploy.production@1.0.0",
      status: "error",
      cause: "test file",
      file: `${DEPLOY}/policy.writ`,
      error: `no test file (expected \`${DEPLOY}/policy.test.json\`)`,
      details: [],
    });
    const pay = byName.get("payments.transfer@1.2.0")!;
    expect(pay).toMatchObject({ status: "failed", uncovered: [] });
    expect((pay["cases"] as { passed: boolean; failure?: string }[]).filter((c) => !c.passed)).toEqual([
      { name: expect.any(String), passed: false, failure: "expected verdict `reject`, got `approve`" },
    ]);
    expect(byName.get("customer-data.export@1.0.0")).toMatchObject({ status: "passed" });
  });
});

describe("--format junit", () => {
  async function junitOf(...argv: string[]): Promise<{ code: number; xml: string }> {
    const code = await cli.run("test", ...argv, "--format", "junit");
    return { code, xml: cli.out.join("\n") };
  }

  async function expectValidJunit(xml: string): Promise<void> {
    const result = await validateXML({ xml: [{ fileName: "report.xml", contents: xml }], schema: [JUNIT_XSD] });
    expect(result.errors.map((e) => e.message)).toEqual([]);
    expect(result.valid).toBe(true);
    // What a schema cannot say: every count is the number of elements it counts.
    const suites = [...xml.matchAll(/<testsuite [^>]*>[\s\S]*?<\/testsuite>/g)].map((m) => m[0]);
    const attr = (tag: string, name: string) => Number(new RegExp(`${name}="(\\d+)"`).exec(tag)![1]);
    for (const s of suites) {
      expect(attr(s, "tests")).toBe((s.match(/<testcase /g) ?? []).length);
      expect(attr(s, "failures")).toBe((s.match(/<failure /g) ?? []).length);
      expect(attr(s, "errors")).toBe((s.match(/<error /g) ?? []).length);
    }
    const root = /<testsuites [^>]*>/.exec(xml)![0];
    for (const k of ["tests", "failures", "errors"]) expect(attr(root, k)).toBe(suites.reduce((n, s) => n + attr(s, k), 0));
  }

  it("is valid JUnit XML for passing, failing and untestable policies, whatever the case names hold", async () => {
    const odd = "quotes \" and ' <tags> & ampersands, a line\nbreak, a bell \u0007 and 😀";
    writeTests(PAY, {
      baseSignals: BASE,
      cases: [
        { name: odd, expect: { verdict: "approve" } },
        { name: "wrong on purpose", signals: { risk_score: 95 }, expect: { verdict: "approve", reason: 'a "reason" & <more>' } },
      ],
    });
    rmSync(join(cli.cwd, DEPLOY, "policy.test.json"));
    const { code, xml } = await junitOf("policies", "--require-coverage");
    expect(code).toBe(4);
    await expectValidJunit(xml);
    expect(xml).toContain(
      '<testcase name="quotes &#34; and \' &#60;tags&#62; &#38; ampersands, a line&#10;break, a bell \ufffd and 😀" classname="payments.transfer@1.2.0"/>',
    );
    expect(xml).toMatch(/<failure message="expected verdict `approve`, got `reject`; expected reason [^"]*" type="assertion">/);
    expect(xml).toContain('<testcase name="rule coverage" classname="payments.transfer@1.2.0">');
    expect(xml).toContain(`<error message="no test file (expected \`${DEPLOY}/policy.test.json\`)" type="error">`);
  });

  it("is valid for the shipped policies, every case a passing testcase", async () => {
    const { code, xml } = await junitOf("policies");
    expect(code).toBe(0);
    await expectValidJunit(xml);
    expect(xml).not.toMatch(/<failure|<error/);
    expect(/<testsuites [^>]*tests="(\d+)"/.exec(xml)![1]).toBe(String((xml.match(/<testcase /g) ?? []).length));
  });

  it("reports a policy that does not compile as an error, and exits 3", async () => {
    writeFileSync(
      join(cli.cwd, PAY, "policy.writ"),
      'policy "payments.transfer" version "1.2.0"\ngoverns "a"\nsignals {\n}\nrule r when m > 1 reject "r"\n',
    );
    const { code, xml } = await junitOf(PAY);
    expect(code).toBe(3);
    await expectValidJunit(xml);
    expect(xml).toContain('<error message="does not compile" type="error">does not compile\n');
    expect(xml).toContain("error[E404]: unknown name `m`");
  });

  it("is refused for another format", async () => {
    expect(await cli.run("test", PAY, "--format", "tap")).toBe(2);
    expect(cli.err).toEqual(["writ: test: --format must be text, json or junit, given `tap`"]);
  });
});
