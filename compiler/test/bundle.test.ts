/**
 * The bundle contract, checked from the outside: reproducible bytes, a hash that covers every byte, a
 * signature any Ed25519 library verifies from docs/signing.md alone, and a loader that refuses tampering.
 */
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as ed from "@noble/ed25519";
import canonicalize from "canonicalize";
import { afterAll, describe, expect, it } from "vitest";
import { BundleError, generateSigningKeyPair, loadBundle, loadPublicKeyPem, loadSigningKeyPem, type SigningKey } from "@writ/runtime";
import { compile } from "../src/compile.js";
import type { Bundle } from "../src/phases/emit.js";
import { signingKeyForTests } from "./support/keys.js";

const source = readFileSync(new URL("../../policies/payments.transfer/1.2.0/policy.writ", import.meta.url), "utf8");
const key = signingKeyForTests();
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function build(text = source, signingKey: SigningKey | null = key): Bundle {
  const r = compile("policy.writ", text, signingKey ? { signingKey } : {});
  expect(r.errors).toEqual([]);
  return r.bundle!;
}

function write(bundle: Bundle): string {
  const root = mkdtempSync(join(tmpdir(), "writ-bundle-"));
  dirs.push(root);
  const dir = join(root, bundle.policyId, bundle.version);
  mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of bundle.files) writeFileSync(join(dir, name), bytes);
  return root;
}

describe("reproducible bundles", () => {
  it("gives byte-identical files for the same source and key", () => {
    const a = build();
    const b = build();
    expect([...a.files.keys()]).toEqual(["policy.writ", "signals.schema.json", "policy.ir.json", "bundle.manifest.json", "bundle.sig"]);
    for (const [name, bytes] of a.files) expect(Buffer.from(b.files.get(name)!).equals(Buffer.from(bytes)), name).toBe(true);
  });

  it("changes bundle_hash when any one byte of the source changes", () => {
    const base = build().manifest.bundle_hash;
    // A comment, one letter of a reason, a trailing newline: each is one small edit, each changes the hash.
    const reasonByte = source.replace(/(reject ")([a-z])/, (_, head: string, c: string) => head + c.toUpperCase());
    for (const variant of [`# x\n${source}`, reasonByte, `${source}\n`]) {
      expect(variant).not.toBe(source);
      expect(build(variant).manifest.bundle_hash).not.toBe(base);
    }
  });

  it("records per-file SHA-256, versions and the compiler in the manifest", () => {
    const m = build().manifest;
    expect(m).toMatchObject({
      manifestVersion: 1,
      policyId: "payments.transfer",
      version: "1.2.0",
      schemaVersion: "1.0.0",
      compiler: { name: "writ" },
    });
    expect(Object.keys(m.files).sort()).toEqual(["policy.ir.json", "policy.writ", "signals.schema.json"]);
    for (const h of [...Object.values(m.files), m.bundle_hash]) expect(h).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("bundle.sig verified by an independent Ed25519 library from docs/signing.md alone", () => {
  const bundle = build();
  const manifestText = new TextDecoder().decode(bundle.files.get("bundle.manifest.json"));
  const sig = JSON.parse(new TextDecoder().decode(bundle.files.get("bundle.sig"))) as {
    payloadType: string;
    keyId: string;
    signature: string;
  };
  const rawPublicKey = new Uint8Array(key.publicKey.raw);

  /** PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, written from the design text. */
  function pae(type: string, body: string): Uint8Array {
    const enc = new TextEncoder();
    const b = enc.encode(body);
    const head = enc.encode(`DSSEv1 ${enc.encode(type).length} ${type} ${b.length} `);
    const out = new Uint8Array(head.length + b.length);
    out.set(head);
    out.set(b, head.length);
    return out;
  }

  function verifies(manifest: unknown, payloadType: string): Promise<boolean> {
    const jcs = canonicalize(manifest)!;
    const signature = new Uint8Array(Buffer.from(sig.signature, "base64"));
    return ed.verifyAsync(signature, pae(payloadType, jcs), rawPublicKey, { zip215: false });
  }

  it("verifies over PAE(bundle payloadType, JCS(manifest))", async () => {
    expect(sig.payloadType).toBe("application/vnd.writ.bundle.v1+json");
    expect(sig.keyId).toBe(key.keyId);
    expect(await verifies(JSON.parse(manifestText), sig.payloadType)).toBe(true);
  });

  it("fails when any manifest field changes or the domain is another payloadType", async () => {
    const m = JSON.parse(manifestText) as Record<string, unknown>;
    expect(await verifies({ ...m, version: "1.2.1" }, sig.payloadType)).toBe(false);
    expect(await verifies({ ...m, bundle_hash: "0".repeat(64) }, sig.payloadType)).toBe(false);
    expect(await verifies(m, "application/vnd.writ.attestation.v1+json")).toBe(false);
  });
});

describe("loadBundle", () => {
  const trustedKeys = [key.publicKey];

  it("loads a signed bundle with its pinned key and decides like the IR says", async () => {
    const root = write(build());
    const loaded = await loadBundle(root, "payments.transfer", "1.2.0", { trustedKeys, requireSignature: true });
    expect(loaded.signedBy).toBe(key.keyId);
    expect(loaded.manifest.bundle_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ["policy.writ", "BUNDLE_TAMPERED"],
    ["policy.ir.json", "BUNDLE_TAMPERED"],
    ["signals.schema.json", "BUNDLE_TAMPERED"],
  ])("refuses a bundle whose %s changed by one byte (%s)", async (file, code) => {
    const root = write(build());
    const path = join(root, "payments.transfer", "1.2.0", file);
    const bytes = readFileSync(path);
    bytes[bytes.length - 2]! ^= 1;
    writeFileSync(path, bytes);
    await expect(loadBundle(root, "payments.transfer", "1.2.0", { trustedKeys })).rejects.toMatchObject({ code });
  });

  it("refuses a manifest whose bundle_hash does not cover its contents", async () => {
    const root = write(build());
    const path = join(root, "payments.transfer", "1.2.0", "bundle.manifest.json");
    const m = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    writeFileSync(path, JSON.stringify({ ...m, governs: "something.else" }));
    await expect(loadBundle(root, "payments.transfer", "1.2.0")).rejects.toMatchObject({ code: "BUNDLE_TAMPERED" });
  });

  it("refuses an unsigned bundle when signatures are required, and one signed by an unknown key", async () => {
    const unsigned = write(build(source, null));
    await expect(loadBundle(unsigned, "payments.transfer", "1.2.0", { trustedKeys, requireSignature: true })).rejects.toMatchObject({
      code: "BUNDLE_UNSIGNED",
    });
    const other = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);
    const foreign = write(build(source, other));
    await expect(loadBundle(foreign, "payments.transfer", "1.2.0", { trustedKeys, requireSignature: true })).rejects.toMatchObject({
      code: "BUNDLE_SIGNATURE_INVALID",
    });
  });

  it("refuses ids and versions that are not safe directory names", async () => {
    const root = write(build());
    for (const [id, version] of [
      ["../payments.transfer", "1.2.0"],
      ["payments.transfer", "../1.2.0"],
      ["payments.transfer", "1.2"],
    ]) {
      const error = await loadBundle(root, id!, version!).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BundleError);
      expect((error as BundleError).code).toBe("BUNDLE_NOT_FOUND");
    }
  });

  it("keeps a loaded public key pinned: the PEM round-trips to the same keyId", () => {
    expect(loadPublicKeyPem(key.publicKey.pem).keyId).toBe(key.keyId);
  });
});

describe("signing failures", () => {
  it("reports E801 and emits no bundle when the key's halves do not match", () => {
    const other = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);
    const mismatched: SigningKey = { ...key, publicKey: other.publicKey, keyId: other.keyId };
    const r = compile("policy.writ", source, { signingKey: mismatched });
    expect(r.valid).toBe(false);
    expect(r.bundle).toBeNull();
    expect(r.errors.map((d) => d.code)).toEqual(["E801"]);
    expect(r.errors[0]!.message).toMatch(/^bundle could not be signed: /);
  });
});
