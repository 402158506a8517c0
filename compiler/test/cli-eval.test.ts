/**
 * `writ eval`: one request decided as a runtime decides it, from a policy source, a bundle directory or an archive,
 * with the verdict, the rule and its reason; `--explain` shows every rule's condition down to the values it saw.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { explain, loadBundle } from "@writ/runtime";
import { runEval } from "../src/cli/commands/eval.js";
import { scratchCli } from "./support/cli-run.js";

const cli = scratchCli();
const PAY = "policies/payments.transfer/1.2.0";
/** Over the daily limit, no destination country: `sanctioned` is unknown, `over_daily_limit` decides. */
const SIGNALS = {
  amount: 1000,
  currency: "CHF",
  destination_account: "DE89370400440532013000",
  kyc_verified: true,
  risk_score: 65,
  daily_total: 24500,
  account_age_days: 400,
};

function signalsFile(signals: unknown = SIGNALS): string {
  writeFileSync(join(cli.cwd, "signals.json"), JSON.stringify(signals));
  return "signals.json";
}

const text = () => cli.out.join("\n");

describe("writ eval", () => {
  it("prints the verdict, the rule and its reason for a policy source", async () => {
    expect(await cli.run("eval", PAY, "--signals", signalsFile())).toBe(0);
    expect(cli.out[0]).toMatch(
      /^payments\.transfer@1\.2\.0 \(source `policies\/payments\.transfer\/1\.2\.0\/policy\.writ`, bundle_hash [0-9a-f]{16}…\)$/,
    );
    expect(cli.out.slice(1)).toEqual([
      "verdict: escalate",
      "rule:    over_daily_limit",
      "reason:  transfer would take the customer over the daily limit of 25000",
    ]);
  });

  it("--explain: every rule true, false or unknown, as written and as evaluated, down to each signal's value", async () => {
    expect(await cli.run("eval", `${PAY}/policy.writ`, "--signals", signalsFile(), "--explain")).toBe(0);
    const lines = cli.out;
    const at = (heading: string) => lines.indexOf(heading);
    // An absent optional signal makes its comparison unknown, and the rule does not fire.
    const sanctioned = at('  sanctioned: unknown   (reject "destination is in a sanctioned country")');
    expect(lines.slice(sanctioned + 1, sanctioned + 4)).toEqual([
      "    when destination_country in SANCTIONED or destination_account matches /^(CU|IR|KP|SY)[0-9]{2}/",
      '    (destination_country in ["CU", "IR", "KP", "SY"]) or (destination_account matches /^(CU|IR|KP|SY)[0-9]{2}/): unknown',
      '      destination_country in ["CU", "IR", "KP", "SY"]: unknown',
    ]);
    expect(lines[sanctioned + 4]).toBe("        destination_country: absent");
    const limit = at('  over_daily_limit: true  <- decides   (escalate "transfer would take the customer over the daily limit of 25000")');
    expect(lines.slice(limit + 1, limit + 6)).toEqual([
      "    when daily_total + amount > DAILY_LIMIT",
      "    (daily_total + amount) > 25000: true",
      "      daily_total + amount: 25500",
      "        daily_total: 24500",
      "        amount: 1000",
    ]);
    // Rules after the deciding one are explained too; the catch-all closes the list.
    expect(text()).toContain("  elevated_risk: true   (reject");
    expect(lines.at(-1)).toBe('  otherwise: escalate "transfer is within limits but needs a manual check (risk or currency)"');
  });

  it("--format json: the decision as the sidecar names it, and the runtime's explanation as it is", async () => {
    expect(await cli.run("compile", PAY)).toBe(0);
    cli.out.length = 0;
    expect(await cli.run("eval", PAY, "--signals", signalsFile(), "--explain", "--format", "json")).toBe(0);
    expect(cli.out).toHaveLength(1);
    const answer = JSON.parse(cli.out[0]!) as Record<string, unknown>;
    const bundle = await loadBundle(join(cli.cwd, "policies"), "payments.transfer", "1.2.0");
    expect(answer).toEqual({
      policyId: "payments.transfer",
      version: "1.2.0",
      from: "bundle",
      path: PAY,
      bundleHash: bundle.manifest.bundle_hash,
      signalsValid: true,
      decision: {
        verdict: "escalate",
        ruleMatched: "over_daily_limit",
        reason: "transfer would take the customer over the daily limit of 25000",
      },
      explanation: explain(bundle.ir, SIGNALS).explanation,
    });
  });

  it("reads a bundle directory and an archive as a runtime does, and refuses one that does not verify (exit 5)", async () => {
    expect(await cli.run("compile", PAY)).toBe(0);
    expect(await cli.run("bundle", "pack", PAY, "--out", "archives")).toBe(0);
    cli.out.length = 0;
    expect(await cli.run("eval", "archives/payments.transfer@1.2.0.bundle.json", "--signals", signalsFile())).toBe(0);
    expect(cli.out[0]).toMatch(/\(archive `archives\/payments\.transfer@1\.2\.0\.bundle\.json`/);
    expect(cli.out[2]).toBe("rule:    over_daily_limit");
    // A bundle whose source was edited after it was compiled no longer matches its manifest.
    const source = join(cli.cwd, PAY, "policy.writ");
    writeFileSync(source, readFileSync(source, "utf8").replace("DAILY_LIMIT = 25000", "DAILY_LIMIT = 50000"));
    expect(await cli.run("eval", PAY, "--signals", signalsFile())).toBe(5);
    expect(cli.err.at(-1)).toMatch(/^writ: `policies\/payments\.transfer\/1\.2\.0` does not verify: .*policy\.writ/);
    // Named as a file, the edited source is compiled in memory instead.
    cli.out.length = 0;
    expect(await cli.run("eval", `${PAY}/policy.writ`, "--signals", signalsFile())).toBe(0);
    expect(cli.out[2]).toBe("rule:    elevated_risk");
  });

  it("reads the signals from standard input with `-`", async () => {
    const io = { cwd: cli.cwd, out: (l: string) => cli.out.push(l), err: (l: string) => cli.err.push(l) };
    const stdin = Readable.from([Buffer.from(JSON.stringify({ ...SIGNALS, daily_total: 0 }))]);
    expect(await runEval({ io, policyPath: PAY, signalsPath: "-", explain: false, format: "text", stdin })).toBe(0);
    expect(cli.out.slice(1, 3)).toEqual(["verdict: reject", "rule:    elevated_risk"]);
  });

  it("exits 1 with every VAL error when the schema refuses the signals; nothing is evaluated", async () => {
    const { currency: _c, ...missing } = SIGNALS;
    expect(await cli.run("eval", PAY, "--signals", signalsFile({ ...missing, amount: -5 }))).toBe(1);
    expect(cli.out.slice(1)).toEqual([
      "signals refused by the policy's signals schema:",
      expect.stringMatching(/^ {2}VAL-004 `currency`: /),
      expect.stringMatching(/^ {2}VAL-011 `amount`: /),
    ]);
    cli.out.length = 0;
    expect(await cli.run("eval", PAY, "--signals", signalsFile([1]), "--format", "json")).toBe(1);
    expect(JSON.parse(cli.out[0]!)).toMatchObject({ signalsValid: false, errors: [{ code: "VAL-001" }] });
  });

  it("says undecided when no rule decides and there is no catch-all", async () => {
    writeFileSync(
      join(cli.cwd, "p.writ"),
      'policy "p" version "1.0.0"\ngoverns "a"\nsignals {\n  n: integer\n}\nrule big when n > 10 reject "big"\n',
    );
    expect(await cli.run("eval", "p.writ", "--signals", signalsFile({ n: 1 }), "--explain")).toBe(0);
    expect(cli.out[1]).toMatch(/^verdict: undecided /);
    expect(cli.out).toContain('  big: false   (reject "big")');
    expect(cli.out.at(-1)).toBe("  otherwise: none (the policy has no catch-all)");
  });

  it.each([
    [["eval", PAY], 2, "writ: eval needs --signals FILE (or --signals - for standard input): the signals object to decide"],
    [
      ["eval", "--signals", "s.json"],
      2,
      "writ: eval takes exactly one policy: a .writ file or its directory, a bundle directory or a .bundle.json archive",
    ],
    [["eval", PAY, "--signals", "missing.json"], 2, "writ: cannot read the signals file `missing.json`"],
    [["eval", PAY, "--signals", "signals.json", "--format", "yaml"], 2, "writ: eval: --format must be text or json, given `yaml`"],
    [["eval", "nowhere", "--signals", "signals.json"], 2, "writ: `nowhere` does not exist"],
    [
      ["eval", "policies", "--signals", "signals.json"],
      2,
      "writ: `policies` holds 7 policies: name one (`policies/customer-data.export/1.0.0/policy.writ`, ...)",
    ],
  ])("refuses %j with exit %i and one line", async (argv, code, message) => {
    signalsFile();
    expect(await cli.run(...argv)).toBe(code);
    expect(cli.err).toEqual([message]);
  });

  it("refuses signals that are not strict JSON, and a policy that does not compile (exit 3)", async () => {
    writeFileSync(join(cli.cwd, "dup.json"), '{"amount": 1, "amount": 2}');
    expect(await cli.run("eval", PAY, "--signals", "dup.json")).toBe(2);
    expect(cli.err.at(-1)).toMatch(/^writ: the signals in `dup\.json` are not strict JSON: .*duplicate/);
    writeFileSync(
      join(cli.cwd, "bad.writ"),
      'policy "p" version "1.0.0"\ngoverns "a"\nsignals {\n  n: integer\n}\nrule r when m > 1 reject "r"\n',
    );
    expect(await cli.run("eval", "bad.writ", "--signals", signalsFile({ n: 1 }))).toBe(3);
    expect(cli.err.join("\n")).toContain("error[E404]: unknown name `m`");
    expect(cli.err.at(-1)).toBe("writ: `bad.writ` does not compile");
  });
});
