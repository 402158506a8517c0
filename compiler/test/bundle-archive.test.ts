/**
 * Bundle archives from the compiler's side: every policy of the repository packs to the same bytes every time and
 * loads from its archive exactly as from its directory; `writ bundle pack` and `writ bundle inspect` as a user meets
 * them.
 */
import { readFileSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { archiveFileName, loadBundle, loadBundleArchive, loadPublicKeyPem, packBundleArchive, readBundleDirectory } from "@writ/runtime";
import { compile } from "../src/compile.js";
import { scratchCli } from "./support/cli-run.js";
import { signingKeyForTests } from "./support/keys.js";

const repo = new URL("../../", import.meta.url).pathname;
const key = signingKeyForTests();

/** Every `policy.writ` of the repository's policies/ directory. */
function repoPolicies(): string[] {
  const root = join(repo, "policies");
  return readdirSync(root).flatMap((id) => readdirSync(join(root, id)).map((version) => join(root, id, version, "policy.writ")));
}

describe("the repository's policies as archives", () => {
  const policies = repoPolicies();

  it("are there to test", () => {
    expect(policies.length).toBeGreaterThanOrEqual(3);
  });

  it.each(policies.map((p) => [p.slice(repo.length)]))(
    "%s: compiled twice, signed or not, packs to the same bytes and loads as it is",
    async (path) => {
      const text = readFileSync(join(repo, path), "utf8");
      for (const signingKey of [undefined, key]) {
        const [a, b] = [compile(path, text, signingKey ? { signingKey } : {}), compile(path, text, signingKey ? { signingKey } : {})];
        const bytes = packBundleArchive(a.bundle!.files);
        expect(Buffer.from(packBundleArchive(b.bundle!.files)).equals(Buffer.from(bytes))).toBe(true);
        const { policyId, version } = a.bundle!;
        const trust = signingKey ? { trustedKeys: [key.publicKey], requireSignature: true } : {};
        const loaded = await loadBundleArchive(bytes, archiveFileName(policyId, version), trust, {
          policyId,
          version,
          bundle_hash: a.bundle!.manifest.bundle_hash,
        });
        expect(loaded.manifest).toEqual(a.bundle!.manifest);
        expect(loaded.signedBy).toBe(signingKey ? key.keyId : null);
      }
    },
  );
});

const cli = scratchCli();
const PAY = "policies/payments.transfer/1.2.0";
const ARCHIVE = "site/payments.transfer@1.2.0.bundle.json";

async function compileSigned(): Promise<void> {
  expect(await cli.run("keygen", "--out", "k")).toBe(0);
  expect(await cli.run("compile", "policies", "--sign-key", "k.key")).toBe(0);
  cli.out.length = 0;
}

describe("writ bundle pack", () => {
  it("writes one archive per bundle, says where with its bundle_hash and size, and the archive loads as the directory", async () => {
    await compileSigned();
    expect(await cli.run("bundle", "pack", PAY, "policies/deploy.production/1.0.0", "--out", "site", "--key", "k.pub")).toBe(0);
    const size = statSync(join(cli.cwd, ARCHIVE)).size;
    const fromDir = await loadBundle(join(cli.cwd, "policies"), "payments.transfer", "1.2.0");
    const keyId = loadPublicKeyPem(readFileSync(join(cli.cwd, "k.pub"), "utf8")).keyId;
    expect(cli.out).toEqual([
      `${ARCHIVE}: bundle_hash ${fromDir.manifest.bundle_hash}, ${size} bytes, signed by ${keyId}`,
      expect.stringMatching(
        /^site\/deploy\.production@1\.0\.0\.bundle\.json: bundle_hash [0-9a-f]{64}, \d+ bytes, signed by [0-9a-f]{32}$/,
      ),
    ]);
    const fromArchive = await loadBundleArchive(readFileSync(join(cli.cwd, ARCHIVE)), "a", {});
    expect(fromArchive.manifest).toEqual(fromDir.manifest);
    expect(readFileSync(join(cli.cwd, ARCHIVE))).toEqual(Buffer.from(packBundleArchive(await readBundleDirectory(join(cli.cwd, PAY)))));
  });

  it("packs the same sources to the same bytes", async () => {
    await compileSigned();
    expect(await cli.run("bundle", "pack", PAY, "--out", "site")).toBe(0);
    expect(await cli.run("bundle", "pack", PAY, "--out", "again")).toBe(0);
    expect(readFileSync(join(cli.cwd, "again/payments.transfer@1.2.0.bundle.json")).equals(readFileSync(join(cli.cwd, ARCHIVE)))).toBe(
      true,
    );
    expect(cli.out[1]).toMatch(/, signature not checked \(no --key\)$/);
  });

  it("exits 5 and writes nothing when a bundle does not verify", async () => {
    await compileSigned();
    const ir = join(cli.cwd, PAY, "policy.ir.json");
    writeFileSync(ir, readFileSync(ir, "utf8").replace("}", " }"));
    expect(await cli.run("bundle", "pack", PAY, "--out", "site")).toBe(5);
    expect(cli.out).toEqual([`${PAY}: NOT verified: file \`policy.ir.json\` does not match its hash in the manifest`]);
    expect(() => statSync(join(cli.cwd, ARCHIVE))).toThrow();
  });

  it("exits 5 when --key is given and the bundle is not signed by it", async () => {
    expect(await cli.run("compile", "policies")).toBe(0);
    expect(await cli.run("keygen", "--out", "k")).toBe(0);
    cli.out.length = 0;
    expect(await cli.run("bundle", "pack", PAY, "--out", "site", "--key", "k.pub")).toBe(5);
    expect(cli.out).toEqual([`${PAY}: NOT verified: bundle is not signed and signatures are required`]);
  });

  it("refuses to replace an archive of the same version with another bundle_hash, unless --force", async () => {
    expect(await cli.run("compile", "policies")).toBe(0);
    expect(await cli.run("bundle", "pack", PAY, "--out", "site")).toBe(0);
    const first = readFileSync(join(cli.cwd, ARCHIVE));
    writeFileSync(join(cli.cwd, PAY, "policy.writ"), `${readFileSync(join(cli.cwd, PAY, "policy.writ"), "utf8")}# a comment\n`);
    expect(await cli.run("compile", PAY, "--force")).toBe(0);
    cli.err.length = 0;
    expect(await cli.run("bundle", "pack", PAY, "--out", "site")).toBe(3);
    expect(cli.err).toEqual([
      expect.stringMatching(
        /^error: `payments\.transfer@1\.2\.0` already exists in `site` with a different bundle_hash \(`[0-9a-f]{16}…`\): a version is immutable; /,
      ),
    ]);
    expect(readFileSync(join(cli.cwd, ARCHIVE)).equals(first)).toBe(true);
    expect(await cli.run("bundle", "pack", PAY, "--out", "site", "--force")).toBe(0);
    expect(readFileSync(join(cli.cwd, ARCHIVE)).equals(first)).toBe(false);
  });
});

describe("writ bundle inspect", () => {
  it("prints policy, bundle_hash, the verified signer and each file with size and sha256", async () => {
    await compileSigned();
    expect(await cli.run("bundle", "pack", PAY, "--out", "site")).toBe(0);
    cli.out.length = 0;
    expect(await cli.run("bundle", "inspect", ARCHIVE, "--key", "k.pub")).toBe(0);
    const keyId = loadPublicKeyPem(readFileSync(join(cli.cwd, "k.pub"), "utf8")).keyId;
    const { manifest } = await loadBundle(join(cli.cwd, "policies"), "payments.transfer", "1.2.0");
    expect(cli.out.slice(0, 5)).toEqual([
      `archive:     ${ARCHIVE} (${statSync(join(cli.cwd, ARCHIVE)).size} bytes)`,
      "policy:      payments.transfer@1.2.0",
      `bundle_hash: ${manifest.bundle_hash}`,
      `signature:   signed by ${keyId} (verified)`,
      "files:",
    ]);
    expect(cli.out.slice(5).map((l) => l.trim().split(/\s+/)[0])).toEqual([
      "bundle.manifest.json",
      "bundle.sig",
      "policy.ir.json",
      "policy.writ",
      "signals.schema.json",
    ]);
    const irSize = statSync(join(cli.cwd, PAY, "policy.ir.json")).size;
    expect(cli.out).toContainEqual(
      expect.stringMatching(new RegExp(`^  policy\\.ir\\.json +${irSize} bytes  sha256 ${manifest.files["policy.ir.json"]}$`)),
    );
  });

  it("--json: one object; without --key the signer is named but not verified", async () => {
    await compileSigned();
    expect(await cli.run("bundle", "pack", PAY, "--out", "site")).toBe(0);
    cli.out.length = 0;
    expect(await cli.run("bundle", "inspect", ARCHIVE, "--json")).toBe(0);
    expect(cli.out).toHaveLength(1);
    const report = JSON.parse(cli.out[0]!) as {
      verified: boolean;
      policyId: string;
      signature: { keyId: string; verified: boolean };
      files: { name: string; bytes: number; sha256: string }[];
    };
    expect(report).toMatchObject({ verified: true, policyId: "payments.transfer", version: "1.2.0", signature: { verified: false } });
    expect(report.signature.keyId).toMatch(/^[0-9a-f]{32}$/);
    expect(report.files.map((f) => f.name)).toEqual([
      "bundle.manifest.json",
      "bundle.sig",
      "policy.ir.json",
      "policy.writ",
      "signals.schema.json",
    ]);
  });

  it("exits 5 when the archive does not verify: a changed file, or a key that did not sign it", async () => {
    await compileSigned();
    expect(await cli.run("bundle", "pack", PAY, "--out", "site")).toBe(0);
    expect(await cli.run("keygen", "--out", "other")).toBe(0);
    cli.out.length = 0;
    expect(await cli.run("bundle", "inspect", ARCHIVE, "--key", "other.pub")).toBe(5);
    expect(cli.out).toEqual([`archive ${ARCHIVE}: NOT verified: bundle signature does not verify against any trusted key`]);
    const path = join(cli.cwd, ARCHIVE);
    writeFileSync(path, readFileSync(path, "utf8").replace("approve", "apprové"));
    cli.out.length = 0;
    expect(await cli.run("bundle", "inspect", ARCHIVE, "--json")).toBe(5);
    expect(JSON.parse(cli.out[0]!)).toMatchObject({ verified: false, error: { code: "BUNDLE_TAMPERED" } });
  });

  it("exits 2 for an archive that is not there", async () => {
    expect(await cli.run("bundle", "inspect", "nowhere.bundle.json")).toBe(2);
    expect(cli.err).toEqual(["writ: bundle inspect: `nowhere.bundle.json` does not exist"]);
  });

  it("an archive renamed is still inspected by its content", async () => {
    expect(await cli.run("compile", "policies")).toBe(0);
    expect(await cli.run("bundle", "pack", PAY, "--out", "site")).toBe(0);
    renameSync(join(cli.cwd, ARCHIVE), join(cli.cwd, "site/renamed.bundle.json"));
    cli.out.length = 0;
    expect(await cli.run("bundle", "inspect", "site/renamed.bundle.json")).toBe(0);
    expect(cli.out[1]).toBe("policy:      payments.transfer@1.2.0");
    expect(cli.out[3]).toBe("signature:   unsigned");
  });
});
