/**
 * `writ typegen` as a user meets it: every form a policy comes in (sources, a compiled policies root, a bundle
 * directory, archives) gives the same bytes, run after run; failures write nothing and say what failed; bad arguments
 * exit 2.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scratchCli } from "../support/cli-run.js";

const cli = scratchCli();
const PAY = "policies/payments.transfer/1.2.0";

async function typegen(...argv: string[]): Promise<{ code: number; text: string }> {
  const code = await cli.run("typegen", ...argv, "--out", "-");
  return { code, text: `${cli.out.splice(0).join("\n")}\n` };
}

describe("writ typegen", () => {
  it("gives the same declarations from sources, a compiled root, bundle directories and archives, run after run", async () => {
    const fromSources = await typegen("policies");
    expect(fromSources.code).toBe(0);
    expect(await typegen("policies")).toEqual(fromSources);
    expect(await cli.run("compile", "policies", "--out", "compiled")).toBe(0);
    expect(
      await cli.run(
        "bundle",
        "pack",
        "compiled/payments.transfer/1.1.0",
        "compiled/payments.transfer/1.2.0",
        "compiled/payments.transfer/1.3.0",
        "compiled/payments.transfer/1.4.0",
        "compiled/deploy.production/1.0.0",
        "compiled/deploy.production/1.1.0",
        "compiled/customer-data.export/1.0.0",
        "--out",
        "site",
      ),
    ).toBe(0);
    cli.out.length = 0;
    expect(await typegen("compiled")).toEqual(fromSources);
    expect(await typegen("site")).toEqual(fromSources);
    // The same version from two places with the same schema is read once; argument order changes nothing.
    expect(await typegen("site/deploy.production@1.0.0.bundle.json", "compiled/payments.transfer/1.2.0", "policies")).toEqual(fromSources);

    const { text } = fromSources;
    expect(text.match(/^export interface \w+ \{/gm)).toEqual([
      "export interface CustomerDataExport_1_0_0Signals {",
      "export interface DeployProduction_1_0_0Signals {",
      "export interface DeployProduction_1_1_0Signals {",
      "export interface PaymentsTransfer_1_1_0Signals {",
      "export interface PaymentsTransfer_1_2_0Signals {",
      "export interface PaymentsTransfer_1_3_0Signals {",
      "export interface PaymentsTransfer_1_4_0Signals {",
      "export interface WritPolicies {",
    ]);
    const pay = text.slice(text.indexOf("export interface PaymentsTransfer_1_2_0Signals"));
    expect(pay).toContain("   * An integer >= 0 and <= 100.\n   */\n  risk_score: number;");
    expect(pay).toContain('  currency: "USD" | "EUR" | "GBP" | "CHF" | "JPY";');
    expect(pay).toContain("  destination_country?: string;\n}");
    expect(pay).toContain("  kyc_verified: boolean;");
    expect(pay.slice(0, pay.indexOf("\n}\n"))).not.toContain("[k: string]");
    // A timestamp signal is typed as the RFC 3339 text it is sent as.
    const opened = text.slice(text.indexOf("export interface PaymentsTransfer_1_4_0Signals"));
    expect(opened.slice(0, opened.indexOf("\n}\n"))).toMatch(/account_opened_at: string;/);
  });

  it("writes --out FILE (creating its directory) and says what it wrote", async () => {
    expect(await cli.run("typegen", PAY, "--out", "src/generated/writ-policies.ts")).toBe(0);
    expect(cli.out).toEqual(["src/generated/writ-policies.ts: signals types of 1 policy version (1 policy)"]);
    const text = readFileSync(join(cli.cwd, "src/generated/writ-policies.ts"), "utf8");
    expect(text).toContain('"payments.transfer": {\n    "1.2.0": PaymentsTransfer_1_2_0Signals;\n  };');
    expect(text.endsWith(";\n  };\n}\n")).toBe(true);
  });

  it("writes nothing when a source does not compile, and shows its diagnostics (exit 3)", async () => {
    writeFileSync(
      join(cli.cwd, "bad.writ"),
      'policy "x" version "1.0.0"\ngoverns "a"\nsignals {\n  n: integer\n}\nrule r when m > 1 approve "x"\n',
    );
    expect(await cli.run("typegen", "policies", "bad.writ", "--out", "types.ts")).toBe(3);
    expect(cli.err.join("\n")).toContain("error[E404]: unknown name `m`");
    expect(cli.err).toContain("bad.writ: failed with 1 error");
    expect(cli.err.at(-1)).toBe("typegen: 1 input failed; nothing written");
    expect(existsSync(join(cli.cwd, "types.ts"))).toBe(false);
  });

  it("refuses a bundle that does not verify (exit 5), and one whose file is a FIFO without waiting on it", async () => {
    expect(await cli.run("compile", PAY)).toBe(0);
    cli.err.length = 0;
    const schemaFile = join(cli.cwd, PAY, "signals.schema.json");
    writeFileSync(schemaFile, readFileSync(schemaFile, "utf8").replace('"amount"', '"amout"'));
    expect(await cli.run("typegen", "policies", "--out", "-")).toBe(5);
    expect(cli.err[0]).toBe(`${PAY}: NOT verified: file \`signals.schema.json\` does not match its hash in the manifest`);
    rmSync(schemaFile);
    execFileSync("mkfifo", [schemaFile]);
    cli.err.length = 0;
    expect(await cli.run("typegen", PAY, "--out", "-")).toBe(5);
    expect(cli.err[0]).toMatch(new RegExp(`^${PAY}: NOT verified: .*signals\\.schema\\.json`));
  });

  it("refuses an archive that is not one (exit 5)", async () => {
    writeFileSync(join(cli.cwd, "x@1.0.0.bundle.json"), "{not json");
    expect(await cli.run("typegen", "x@1.0.0.bundle.json", "--out", "-")).toBe(5);
    expect(cli.err[0]).toMatch(/^x@1\.0\.0\.bundle\.json: NOT verified: archive is not valid JSON/);
  });

  it("refuses one version found with two different schemas (exit 3)", async () => {
    expect(await cli.run("compile", PAY, "--out", "old")).toBe(0);
    cli.err.length = 0;
    const source = join(cli.cwd, PAY, "policy.writ");
    writeFileSync(source, readFileSync(source, "utf8").replace("kyc_verified: boolean", "kyc_verified?: boolean"));
    expect(await cli.run("typegen", "old", PAY, "--out", "-")).toBe(3);
    expect(cli.err[0]).toBe(
      `typegen: \`${PAY}/policy.writ\` and \`old/payments.transfer/1.2.0\` hold \`payments.transfer@1.2.0\` with different signals schemas`,
    );
  });

  it.each([
    [["policies"], "writ: typegen needs --out FILE, or --out - for standard output"],
    [["--out", "-"], "writ: typegen: name a policies root, a policy or bundle directory, or a `.bundle.json` archive"],
    [["nowhere", "--out", "-"], "writ: typegen: `nowhere` does not exist"],
    [
      ["policies/payments.transfer/1.2.0/policy.test.json", "--out", "-"],
      "writ: typegen: `policies/payments.transfer/1.2.0/policy.test.json` is not a policy (`.writ`), a bundle archive (`.bundle.json`) or a directory",
    ],
    [["empty", "--out", "-"], "writ: typegen: `empty` holds no policy (`.writ`), bundle directory or bundle archive (`.bundle.json`)"],
    [["policies", "--out", "-", "--strict"], "writ: typegen: unknown option `--strict` (see `writ help`)"],
  ])("bad arguments %j exit 2 with one line", async (argv, message) => {
    mkdirSync(join(cli.cwd, "empty"));
    expect(await cli.run("typegen", ...argv)).toBe(2);
    expect(cli.err).toEqual([message]);
    expect(cli.out).toEqual([]);
  });

  it("--help prints its usage and exits 0", async () => {
    expect(await cli.run("typegen", "--help")).toBe(0);
    expect(cli.out[0]).toMatch(/^usage: writ typegen <path>\.\.\. +TypeScript types of each policy version's signals/);
    expect(cli.out.join("\n")).toContain("--out FILE        the declarations file to write; - writes them to standard output");
  });
});
