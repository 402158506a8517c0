/**
 * `writ bundle index`: publishing a bundle source. The index it writes is what a reader trusts (`readSourceIndex`):
 * every archive verified and named after its content, the serial one above the last, aliases kept unless changed, and
 * nothing written when something is wrong.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { loadPublicKeyPem, readSourceIndex, type SourceIndex } from "@writ/runtime";
import { scratchCli } from "./support/cli-run.js";

const cli = scratchCli();
const INDEX = "site/index.json";

beforeEach(async () => {
  expect(await cli.run("keygen", "--out", "k")).toBe(0);
  expect(await cli.run("compile", "policies", "--sign-key", "k.key")).toBe(0);
  expect(await cli.run("bundle", "pack", "policies/payments.transfer/1.2.0", "policies/deploy.production/1.0.0", "--out", "site")).toBe(0);
  cli.out.length = 0;
  cli.err.length = 0;
});

function published(now = new Date()): SourceIndex {
  const pub = loadPublicKeyPem(readFileSync(join(cli.cwd, "k.pub"), "utf8"));
  return readSourceIndex(readFileSync(join(cli.cwd, INDEX)), [pub], { now, origin: INDEX }).index;
}

const index = (...args: string[]): Promise<number> => cli.run("bundle", "index", "site", "--sign-key", "k.key", ...args);

describe("writ bundle index", () => {
  it("lists every archive, signed, serial 1, and says so", async () => {
    expect(await index("--alias", "payments.transfer@stable=1.2.0")).toBe(0);
    const keyId = loadPublicKeyPem(readFileSync(join(cli.cwd, "k.pub"), "utf8")).keyId;
    expect(cli.out).toEqual([`${INDEX}: serial 1, 2 bundles, 1 alias, signed by ${keyId}`]);
    const got = published();
    expect(got.serial).toBe(1);
    expect(got.bundles.map((b) => `${b.policyId}@${b.version}`)).toEqual(["deploy.production@1.0.0", "payments.transfer@1.2.0"]);
    const manifest = JSON.parse(readFileSync(join(cli.cwd, "policies/payments.transfer/1.2.0/bundle.manifest.json"), "utf8")) as {
      bundle_hash: string;
    };
    expect(got.bundles[1]!.bundle_hash).toBe(manifest.bundle_hash);
    expect(got.aliases).toEqual([{ policyId: "payments.transfer", alias: "stable", version: "1.2.0" }]);
    expect(got.expiresAt).toBeUndefined();
  });

  it("publishing again: the serial goes up by one and aliases are kept, overridden or removed", async () => {
    expect(await index("--alias", "payments.transfer@stable=1.2.0", "--alias", "deploy.production@stable=1.0.0")).toBe(0);
    expect(await index()).toBe(0);
    expect(published()).toMatchObject({ serial: 2, aliases: [{ policyId: "deploy.production" }, { policyId: "payments.transfer" }] });
    expect(await index("--alias", "deploy.production@stable=")).toBe(0);
    expect(published()).toMatchObject({ serial: 3, aliases: [{ policyId: "payments.transfer", alias: "stable" }] });
  });

  it("--expires-in sets expiresAt that far after issuedAt; readers refuse it after that", async () => {
    expect(await index("--expires-in", "30d")).toBe(0);
    const got = published();
    expect(Date.parse(got.expiresAt!) - Date.parse(got.issuedAt)).toBe(30 * 86_400_000);
    expect(() => published(new Date(Date.parse(got.expiresAt!) + 1))).toThrow(expect.objectContaining({ code: "INDEX_EXPIRED" }));
  });

  it("an alias whose target is gone is an error, and nothing is written", async () => {
    expect(await index("--alias", "payments.transfer@stable=1.2.0")).toBe(0);
    const before = readFileSync(join(cli.cwd, INDEX));
    renameSync(join(cli.cwd, "site/payments.transfer@1.2.0.bundle.json"), join(cli.cwd, "payments.transfer@1.2.0.bundle.json"));
    expect(await index()).toBe(2);
    expect(cli.err).toEqual([
      "writ: bundle index: alias `payments.transfer@stable` names `payments.transfer@1.2.0`, which `site` does not hold: add its archive, or remove the alias with --alias payments.transfer@stable=",
    ]);
    expect(readFileSync(join(cli.cwd, INDEX)).equals(before)).toBe(true);
  });

  it("an archive named after another bundle than it holds does not verify (exit 5)", async () => {
    renameSync(join(cli.cwd, "site/deploy.production@1.0.0.bundle.json"), join(cli.cwd, "site/deploy.production@2.0.0.bundle.json"));
    expect(await index()).toBe(5);
    expect(cli.out).toEqual([
      "deploy.production@2.0.0.bundle.json: NOT verified: it holds `deploy.production@1.0.0`, so its name must be `deploy.production@1.0.0.bundle.json`",
    ]);
    expect(() => readFileSync(join(cli.cwd, INDEX))).toThrow();
  });

  it("a tampered archive does not verify (exit 5)", async () => {
    const path = join(cli.cwd, "site/payments.transfer@1.2.0.bundle.json");
    writeFileSync(path, readFileSync(path, "utf8").replace("approve", "apprové"));
    expect(await index()).toBe(5);
    expect(cli.out[0]).toMatch(
      /^payments\.transfer@1\.2\.0\.bundle\.json: NOT verified: file `[a-z.]+` does not match its hash in the manifest$/,
    );
  });

  it("an index.json that cannot be read needs --serial, above any serial readers saw", async () => {
    expect(await index()).toBe(0);
    writeFileSync(join(cli.cwd, INDEX), "{}");
    expect(await index()).toBe(2);
    expect(cli.err[0]).toBe(
      "writ: bundle index: `site/index.json` cannot be read (index: index file lacks `index`): pass --serial N, N above the serial its readers last accepted",
    );
    expect(await index("--serial", "10")).toBe(0);
    expect(published().serial).toBe(10);
    expect(await index("--serial", "10")).toBe(2);
    expect(cli.err.at(-1)).toBe(
      "writ: bundle index: --serial 10 is not above the serial of `site/index.json` (10): readers would refuse it as a rollback",
    );
  });

  it("a listed version whose bundle_hash changed is refused (exit 3) unless --force", async () => {
    expect(await index()).toBe(0);
    const pay = "policies/payments.transfer/1.2.0";
    writeFileSync(join(cli.cwd, pay, "policy.writ"), `${readFileSync(join(cli.cwd, pay, "policy.writ"), "utf8")}# a comment\n`);
    expect(await cli.run("compile", pay, "--sign-key", "k.key", "--force")).toBe(0);
    expect(await cli.run("bundle", "pack", pay, "--out", "site", "--force")).toBe(0);
    cli.err.length = 0;
    expect(await index()).toBe(3);
    expect(cli.err).toEqual([
      expect.stringMatching(/^error: `payments\.transfer@1\.2\.0` already exists in `site\/index\.json` with a different bundle_hash/),
    ]);
    expect(published().serial).toBe(1);
    expect(await index("--force")).toBe(0);
    expect(published().serial).toBe(2);
  });

  it.each([
    [
      ["--alias", "payments.transfer@1.2.0=1.2.0"],
      "writ: bundle index: --alias `payments.transfer@1.2.0=1.2.0` is not `policyId@alias=version`",
    ],
    [["--alias", "stable=1.2.0"], "writ: bundle index: --alias `stable=1.2.0` is not `policyId@alias=version`"],
    [["--expires-in", "1y"], "writ: bundle index: --expires-in `1y` is not a duration such as `30d`, `12h`, `90m` or `45s`"],
    [["--serial", "0"], "writ: bundle index: --serial `0` is not a positive integer"],
  ])("bad arguments %j exit 2", async (args, message) => {
    expect(await index(...args)).toBe(2);
    expect(cli.err[0]!.startsWith(message)).toBe(true);
  });

  it("needs --sign-key", async () => {
    expect(await cli.run("bundle", "index", "site")).toBe(2);
    expect(cli.err).toEqual(["writ: bundle index needs --sign-key FILE: the key readers pin to trust the index"]);
  });
});
