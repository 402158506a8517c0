/**
 * `writ compile` treats a version as immutable: a bundle already in the output root is kept when the same sources are
 * compiled again, and never replaced by other content without --force (then with a warning).
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scratchCli } from "./support/cli-run.js";

const cli = scratchCli();
const SOURCE = "src/transfer.writ";
const BUNDLE = "out/payments.transfer/1.3.0";

function writeSource(reason: string): void {
  const text = readFileSync(join(cli.cwd, "policies/payments.transfer/1.3.0/policy.writ"), "utf8");
  expect(text).toContain('"risk score is too high for any transfer"');
  const changed = text.replace('"risk score is too high for any transfer"', JSON.stringify(reason));
  mkdirSync(join(cli.cwd, "src"), { recursive: true });
  writeFileSync(join(cli.cwd, SOURCE), changed);
}

/** Every file of the bundle directory, by name. */
function bundleBytes(): Map<string, string> {
  const dir = join(cli.cwd, BUNDLE);
  return new Map(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), "latin1")]));
}

describe("writ compile: a version is immutable", () => {
  it("the same sources again: the bundle is kept untouched and the line says unchanged", async () => {
    writeSource("risk score is too high for any transfer");
    expect(await cli.run("compile", SOURCE, "--out", "out")).toBe(0);
    const first = bundleBytes();
    cli.out.length = 0;
    expect(await cli.run("compile", SOURCE, "--out", "out")).toBe(0);
    expect(cli.out).toEqual([
      expect.stringMatching(
        /^src\/transfer\.writ: payments\.transfer@1\.3\.0 unchanged in out\/payments\.transfer\/1\.3\.0 \(bundle_hash [0-9a-f]{16}…, unsigned\)$/,
      ),
    ]);
    expect(bundleBytes()).toEqual(first);
  });

  it("changed rules under the same version: exit 3, one line, and the first bytes stay", async () => {
    writeSource("risk score is too high for any transfer");
    expect(await cli.run("compile", SOURCE, "--out", "out")).toBe(0);
    const first = bundleBytes();
    const hash = (JSON.parse(first.get("bundle.manifest.json")!) as { bundle_hash: string }).bundle_hash;
    writeSource("risk score is far too high");
    cli.err.length = 0;
    expect(await cli.run("compile", SOURCE, "--out", "out")).toBe(3);
    expect(cli.err).toEqual([
      `error: \`payments.transfer@1.3.0\` already exists in \`out\` with a different bundle_hash (\`${hash.slice(0, 16)}…\`): a version is immutable; bump \`version\`, or pass --force to overwrite`,
      "compiled 1 policy: 0 ok, 1 failed, 0 warnings",
    ]);
    expect(bundleBytes()).toEqual(first);
  });

  it("--force overwrites with a warning line", async () => {
    writeSource("risk score is too high for any transfer");
    expect(await cli.run("compile", SOURCE, "--out", "out")).toBe(0);
    const first = bundleBytes();
    writeSource("risk score is far too high");
    cli.err.length = 0;
    expect(await cli.run("compile", SOURCE, "--out", "out", "--force")).toBe(0);
    expect(cli.err[0]).toMatch(
      /^warning: --force: overwriting `payments\.transfer@1\.3\.0` in `out` \(bundle_hash `[0-9a-f]{16}…`\) with bundle_hash `[0-9a-f]{16}…`: /,
    );
    const now = bundleBytes();
    expect(now.get("policy.ir.json")).toContain("risk score is far too high");
    expect(now.get("bundle.manifest.json")).not.toBe(first.get("bundle.manifest.json"));
  });

  it("a manifest that cannot be read is refused likewise, unless --force", async () => {
    writeSource("risk score is too high for any transfer");
    mkdirSync(join(cli.cwd, BUNDLE), { recursive: true });
    writeFileSync(join(cli.cwd, BUNDLE, "bundle.manifest.json"), "{ not json");
    expect(await cli.run("compile", SOURCE, "--out", "out")).toBe(3);
    expect(cli.err[0]).toBe(
      "error: `payments.transfer@1.3.0` already exists in `out` but its `bundle.manifest.json` cannot be read as a bundle manifest: a version is immutable; bump `version`, or pass --force to overwrite",
    );
    expect(readFileSync(join(cli.cwd, BUNDLE, "bundle.manifest.json"), "utf8")).toBe("{ not json");
    expect(await cli.run("compile", SOURCE, "--out", "out", "--force")).toBe(0);
    expect(JSON.parse(readFileSync(join(cli.cwd, BUNDLE, "bundle.manifest.json"), "utf8"))).toMatchObject({
      policyId: "payments.transfer",
    });
  });

  it("a refused policy does not stop the others", async () => {
    expect(await cli.run("compile", "policies", "--out", "out")).toBe(0);
    writeSource("risk score is far too high");
    cli.out.length = 0;
    expect(await cli.run("compile", "policies", SOURCE, "--out", "out")).toBe(3);
    expect(cli.out.filter((l) => l.includes(" unchanged in "))).toHaveLength(7);
  });

  it("recompiling the same source with a key signs the bundle already there, leaving its bytes and bundle_hash", async () => {
    writeSource("risk score is too high for any transfer");
    expect(await cli.run("compile", SOURCE, "--out", "out")).toBe(0);
    const manifest = join(cli.cwd, "out", "payments.transfer", "1.3.0", "bundle.manifest.json");
    const before = readFileSync(manifest);
    expect(await cli.run("keygen", "--out", "k")).toBe(0);
    cli.out.length = 0;
    expect(await cli.run("compile", SOURCE, "--out", "out", "--sign-key", "k.key")).toBe(0);
    expect(cli.out[0]).toMatch(/unchanged in .*\(bundle_hash [0-9a-f]{16}…\), now signed by [0-9a-f]{32}$/);
    expect(readFileSync(manifest)).toEqual(before);
    expect(await cli.run("verify", join("out", "payments.transfer", "1.3.0"), "--key", "k.pub")).toBe(0);
  });
});
