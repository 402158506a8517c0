/**
 * The policy authors' CLI as a user meets it: exit codes, one-line errors, files written where promised.
 * Most cases call `main` in-process; a few run the built binary to check what a shell sees.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as rt from "@writ/runtime";
import { loadBundle, loadPublicKeyPem } from "@writ/runtime";
import { main } from "../src/cli/main.js";
import { signingKeyForTests } from "./support/keys.js";

const repo = new URL("../../", import.meta.url).pathname;
let cwd: string;
let out: string[];
let err: string[];

beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), "writ-cli-"));
  cpSync(join(repo, "policies"), join(cwd, "policies"), {
    recursive: true,
    filter: (src) => !/bundle|\.json$/.test(src) || src.endsWith("policy.test.json"),
  });
  out = [];
  err = [];
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

const run = (...argv: string[]): Promise<number> => main(argv, { cwd, out: (l) => out.push(l), err: (l) => err.push(l) });
const PAY = "policies/payments.transfer/1.3.0";

describe("writ compile", () => {
  it("writes a bundle beside each policy and says where", async () => {
    expect(await run("compile", "policies")).toBe(0);
    for (const f of ["policy.writ", "signals.schema.json", "policy.ir.json", "bundle.manifest.json"])
      expect(existsSync(join(cwd, PAY, f))).toBe(true);
    expect(existsSync(join(cwd, PAY, "bundle.sig"))).toBe(false);
    expect(out.join("\n")).toMatch(
      /payments\.transfer@1\.3\.0 -> policies\/payments\.transfer\/1\.3\.0 \(bundle_hash [0-9a-f]{16}…, unsigned\)/,
    );
    await expect(loadBundle(join(cwd, "policies"), "payments.transfer", "1.3.0")).resolves.toBeTruthy();
  });

  it("signs with a key from keygen; the bundle loads with the public key pinned", async () => {
    expect(await run("keygen", "--out", "k")).toBe(0);
    expect(statSync(join(cwd, "k.key")).mode & 0o777).toBe(0o600);
    expect(await run("compile", PAY, "--sign-key", "k.key")).toBe(0);
    const pub = loadPublicKeyPem(readFileSync(join(cwd, "k.pub"), "utf8"));
    const loaded = await loadBundle(join(cwd, "policies"), "payments.transfer", "1.3.0", { trustedKeys: [pub], requireSignature: true });
    expect(loaded.signedBy).toBe(pub.keyId);
    // Recompiling the same source unsigned keeps the bundle as it is (a version is immutable), signature included.
    expect(await run("compile", PAY)).toBe(0);
    expect(existsSync(join(cwd, PAY, "bundle.sig"))).toBe(true);
    // Rewriting it unsigned (--force) removes the old signature rather than leaving it beside a new manifest.
    expect(await run("compile", PAY, "--force")).toBe(0);
    expect(existsSync(join(cwd, PAY, "bundle.sig"))).toBe(false);
  });

  it("exits 3 with diagnostics when a policy does not compile", async () => {
    const bad = join(cwd, "bad.writ");
    writeFileSync(bad, 'policy "x" version "1.0.0"\ngoverns "a"\nsignals {\n  n: integer\n}\nrule r when m > 1 approve "x"\n');
    expect(await run("compile", "bad.writ")).toBe(3);
    expect(err.join("\n")).toContain("error[E404]: unknown name `m`");
    expect(err.join("\n")).toContain("bad.writ:6:13");
  });

  it("refuses a source that is not UTF-8 with one line and exit 3", async () => {
    writeFileSync(join(cwd, "latin1.writ"), Buffer.from([0x70, 0x6f, 0x6c, 0xe9, 0x0a]));
    expect(await run("compile", "latin1.writ")).toBe(3);
    expect(err).toEqual(["writ: `latin1.writ` is not UTF-8 text"]);
  });

  it("refuses a policy.writ inside the output root that sits under another id or version", async () => {
    const wrong = join(cwd, "policies/payments.transfer/9.9.9");
    mkdirSync(wrong, { recursive: true });
    cpSync(join(cwd, PAY, "policy.writ"), join(wrong, "policy.writ"));
    expect(await run("compile", "policies/payments.transfer/9.9.9")).toBe(3);
    expect(err.join("\n")).toContain("belongs in `policies/payments.transfer/1.3.0/`");
  });

  it.each([
    [["compile"], "no policy given"],
    [["compile", "nowhere"], "`nowhere` does not exist"],
    [["compile", "package.json"], "is not a `.writ` file or a directory"],
    [["compile", "--frobnicate", "policies"], "unknown option `--frobnicate`"],
    [["compile", "policies", "--sign-key", "missing.key"], "cannot read signing key `missing.key`"],
    [["check", "--format", "xml", "policies"], "--format must be pretty, short or json"],
    [["keygen", "extra"], "keygen takes no paths"],
    [["frobnicate"], "unknown command `frobnicate`"],
  ])("`writ %j` is a bad invocation: exit 2 and one line", async (argv, message) => {
    writeFileSync(join(cwd, "package.json"), "{}");
    expect(await run(...argv)).toBe(2);
    expect(err).toHaveLength(1);
    expect(err[0]).toContain(message);
  });

  it("refuses a signing key that is not an Ed25519 PKCS8 key", async () => {
    writeFileSync(join(cwd, "bad.key"), "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
    expect(await run("compile", "policies", "--sign-key", "bad.key")).toBe(2);
    expect(err[0]).toMatch(/^writ: signing key `bad.key` is unusable: /);
    expect(err[0]).not.toContain("AAAA");
  });
});

describe("writ check", () => {
  it("writes nothing and reports ok", async () => {
    expect(await run("check", "policies")).toBe(0);
    expect(existsSync(join(cwd, PAY, "bundle.manifest.json"))).toBe(false);
    expect(out).toContain(`${PAY}/policy.writ: ok`);
  });

  it("prints machine-readable diagnostics with --format json and fails warnings with --deny-warnings", async () => {
    writeFileSync(
      join(cwd, "w.writ"),
      'policy "x" version "1.0.0"\ngoverns "a"\nsignals {\n  n: integer\n  unused: boolean\n}\nrule r when n > 1 approve "x"\n',
    );
    expect(await run("check", "w.writ", "--format", "json")).toBe(0);
    const codes = out.map((l) => (JSON.parse(l) as { code: string }).code).sort();
    expect(codes).toEqual(["W401", "W601"]);
    expect(await run("check", "w.writ", "--deny-warnings")).toBe(3);
  });
});

describe("writ fmt", () => {
  it("--check exits 1 for an unformatted file and fmt rewrites it into canonical form", async () => {
    const file = join(cwd, PAY, "policy.writ");
    const canonical = readFileSync(file, "utf8");
    writeFileSync(file, canonical.replace(/^rule (\w+) when/m, "rule   $1\n   when"));
    expect(await run("fmt", "--check", "policies")).toBe(1);
    expect(out).toContain(`${PAY}/policy.writ: not formatted`);
    expect(await run("fmt", "policies")).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(canonical);
    expect(await run("fmt", "--check", "policies")).toBe(0);
  });

  it("--diff prints the unified diff fmt would apply, changes nothing, exits 1; `git apply` takes the diff", async () => {
    const file = join(cwd, PAY, "policy.writ");
    const canonical = readFileSync(file, "utf8");
    const messy = canonical
      .replace(/^rule high_risk when/m, "rule   high_risk\n   when")
      .replace("const DAILY_LIMIT = 25000.00", "const DAILY_LIMIT=25000.00");
    writeFileSync(file, messy);
    expect(await run("fmt", "--diff", "policies")).toBe(1);
    expect(readFileSync(file, "utf8")).toBe(messy);
    const diff = `${out.join("\n")}\n`;
    const lines = diff.split("\n");
    expect(lines.slice(0, 2)).toEqual([`--- a/${PAY}/policy.writ`, `+++ b/${PAY}/policy.writ`]);
    expect(lines).toContain("-const DAILY_LIMIT=25000.00");
    expect(lines).toContain("+const DAILY_LIMIT = 25000.00");
    expect(lines.filter((l) => l.startsWith("@@"))).toHaveLength(2);
    expect(err.at(-1)).toBe("7 files: 1 not formatted");
    const applied = spawnSync("git", ["apply", "-"], { cwd, input: diff, encoding: "utf8" });
    expect(applied.stderr).toBe("");
    expect(readFileSync(file, "utf8")).toBe(canonical);
    out.length = 0;
    expect(await run("fmt", "--diff", "policies")).toBe(0);
    expect(out).toEqual([]);
  });

  it("exits 3 and leaves a file with syntax errors untouched", async () => {
    writeFileSync(join(cwd, "broken.writ"), "policy ");
    expect(await run("fmt", "broken.writ")).toBe(3);
    expect(readFileSync(join(cwd, "broken.writ"), "utf8")).toBe("policy ");
  });
});

describe("writ test", () => {
  it("passes the shipped policies with full rule coverage", async () => {
    expect(await run("test", "policies", "--require-coverage")).toBe(0);
    expect(out.filter((l) => l.includes("cases passed"))).toHaveLength(7);
    for (const line of out.filter((l) => l.includes("cases passed"))) {
      const m = /(\d+)\/(\d+) cases passed, rules covered (\d+)\/(\d+)/.exec(line)!;
      expect(m[1]).toBe(m[2]);
      expect(m[3]).toBe(m[4]);
    }
  });

  it("exits 4 and names the case when an expectation is wrong", async () => {
    const path = join(cwd, PAY, "policy.test.json");
    const tests = JSON.parse(readFileSync(path, "utf8")) as { cases: { name: string; expect: { verdict?: string } }[] };
    const target = tests.cases.find((c) => c.expect.verdict === "approve")!;
    target.expect.verdict = "reject";
    writeFileSync(path, JSON.stringify(tests));
    expect(await run("test", PAY)).toBe(4);
    expect(out.join("\n")).toContain(`FAIL ${target.name}: expected verdict \`reject\`, got \`approve\``);
  });

  it("exits 4 when a test file is missing, malformed, or coverage is required and incomplete", async () => {
    rmSync(join(cwd, PAY, "policy.test.json"));
    expect(await run("test", PAY)).toBe(4);
    expect(err.join("\n")).toContain("no test file (expected `policies/payments.transfer/1.3.0/policy.test.json`)");
    writeFileSync(join(cwd, PAY, "policy.test.json"), '{"cases": [{"name": "a", "name": "b"}]}');
    expect(await run("test", PAY)).toBe(4);
    expect(err.join("\n")).toContain("duplicate key `name`");
    writeFileSync(
      join(cwd, PAY, "policy.test.json"),
      JSON.stringify({ cases: [{ name: "only", signals: {}, expect: { invalid: ["VAL-004"] } }] }),
    );
    expect(await run("test", PAY)).toBe(0);
    expect(await run("test", PAY, "--require-coverage")).toBe(4);
    expect(out.join("\n")).toContain("not covered:");
  });
});

describe("writ verify", () => {
  it("verifies a signed bundle against a pinned key and refuses it after tampering or with another key", async () => {
    expect(await run("keygen", "--out", "k")).toBe(0);
    expect(await run("keygen", "--out", "other")).toBe(0);
    expect(await run("compile", PAY, "--sign-key", "k.key")).toBe(0);
    out.length = 0;
    expect(await run("verify", PAY, "--key", "k.pub")).toBe(0);
    expect(out[0]).toMatch(/^bundle payments\.transfer@1\.3\.0: verified \(bundle_hash [0-9a-f]{64}, signed by [0-9a-f]{32}\)$/);
    expect(await run("verify", PAY, "--key", "other.pub")).toBe(5);
    const ir = join(cwd, PAY, "policy.ir.json");
    writeFileSync(ir, readFileSync(ir, "utf8").replace('"reject"', '"approve"'));
    expect(await run("verify", `${PAY}/bundle.manifest.json`, "--key", "k.pub")).toBe(5);
    expect(out.at(-1)).toContain("NOT verified: file `policy.ir.json` does not match its hash in the manifest");
  });

  it("verifies an attestation and an execution proof offline, and fails them when changed", async () => {
    const key = signingKeyForTests();
    writeFileSync(join(cwd, "k.pub"), key.publicKey.pem);
    const root = rt.createTrustRoot("tr-1", [key.publicKey]);
    const signer = rt.createSigner(key, root);
    const manifest = rt.buildManifest(
      { policyId: "p", version: "1.0.0", governs: "a.b", compiler: { name: "writ", version: "0" } },
      new Map([
        ["policy.writ", new Uint8Array()],
        ["signals.schema.json", new Uint8Array()],
        ["policy.ir.json", new Uint8Array()],
      ]),
    );
    const att = rt.createAttestation(
      {
        executionId: "e1",
        bundle: manifest,
        binding: [],
        signals: {},
        verdict: "approve",
        reason: "ok",
        issuedAt: new Date().toISOString(),
      },
      signer,
      rt.createRuntimeIdentity(signer),
    );
    writeFileSync(join(cwd, "att.json"), JSON.stringify(att));
    expect(await run("verify", "att.json", "--key", "k.pub")).toBe(0);
    expect(out.join("\n")).toContain("attestation: valid (signature verified, runtime verified, schema verified)");
    writeFileSync(join(cwd, "att.json"), JSON.stringify({ ...att, policyVersion: "1.0.1" }));
    expect(await run("verify", "att.json", "--key", "k.pub")).toBe(5);
    expect(out.join("\n")).toContain("FAIL signature_verified");

    const proof = await rt.confirmExecution(att, { type: "a.b", payload: {}, executedAt: new Date().toISOString() }, 300, {
      verifier: { trustRoot: root },
      signer,
      store: new rt.MemoryReplayStore(),
    });
    writeFileSync(join(cwd, "proof.json"), JSON.stringify(proof));
    expect(await run("verify", "proof.json", "--key", "k.pub")).toBe(0);
    writeFileSync(join(cwd, "proof.json"), JSON.stringify({ ...proof, match: !proof.match }));
    expect(await run("verify", "proof.json", "--key", "k.pub")).toBe(5);
  });

  it.each([
    [["verify", "x.json"], "verify needs the keys to trust"],
    [["verify", "--key", "k.pub"], "verify takes exactly one path"],
    [["verify", "x.json", "--key", "missing.pub"], "cannot read `missing.pub`"],
  ])("`writ %j` is a bad invocation: exit 2", async (argv, message) => {
    writeFileSync(join(cwd, "x.json"), "{}");
    expect(await run(...argv)).toBe(2);
    expect(err[0]).toContain(message);
  });
});

describe("the built binary", () => {
  const bin = join(repo, "compiler/dist/cli.js");
  it("is built (npm test builds before testing)", () => {
    expect(existsSync(bin), "run `npm run build` first").toBe(true);
  });

  it.runIf(existsSync(bin))("prints one line, no stack trace, and exits 2 for a bad path", () => {
    const r = spawnSync(process.execPath, [bin, "compile", "does/not/exist.writ"], { cwd, encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual(["writ: `does/not/exist.writ` does not exist"]);
  });

  it.runIf(existsSync(bin))("exits 4 from a shell when a policy test fails", () => {
    writeFileSync(
      join(cwd, PAY, "policy.test.json"),
      JSON.stringify({ cases: [{ name: "wrong", signals: {}, expect: { verdict: "approve" } }] }),
    );
    const r = spawnSync(process.execPath, [bin, "test", PAY], { cwd, encoding: "utf8" });
    expect(r.status).toBe(4);
    expect(r.stdout).toContain("FAIL wrong: signals are invalid");
  });
});
