/**
 * The suite's own signature check (docs/signing.md) against the published vectors, read as data at test time:
 * writ's signing vectors (runtime/test/fixtures/signing/vectors.json: JCS, PAE bytes and verdict of every
 * payloadType, malformed signatures, small-order keys) and, when present, the conformance vectors
 * (conformance/vectors/*.json), each with the reason the suite's verifier must give.
 */
import { generateKeyPairSync, sign } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { keyProblem, pinPublicKey, PinnedKeyError, SMALL_ORDER_KEYS } from "../src/pinned-key.js";
import { decodeSignature, pae, signatureProblem, signedBody } from "../src/signature.js";
import { parseStrictJson } from "../src/strict-json.js";

const REPO = new URL("../../", import.meta.url);

interface RuntimeVector {
  readonly name: string;
  readonly payloadType: string;
  readonly object: Record<string, unknown>;
  readonly jcs: string;
  readonly paeHex: string;
  readonly trustedKeys: readonly { readonly pem: string }[];
  readonly signature: string;
  readonly valid: boolean;
  readonly reason?: string;
}

const runtimeVectors = (
  JSON.parse(readFileSync(new URL("runtime/test/fixtures/signing/vectors.json", REPO), "utf8")) as { vectors: RuntimeVector[] }
).vectors;

/** The suite's verdict on an object against pinned keys: what it accepts, or why not (as a vector's reason). */
function verdict(object: unknown, payloadType: string, pems: readonly string[]): { verified: boolean; reason?: string } {
  const keys = [];
  for (const pem of pems) {
    try {
      keys.push(pinPublicKey(pem));
    } catch (e) {
      if (e instanceof PinnedKeyError && /small-order/.test(e.message)) return { verified: false, reason: "KEY_SMALL_ORDER" };
      throw e;
    }
  }
  const problems = keys.map((key) => signatureProblem({ value: object, payloadType }, key));
  if (problems.includes(null)) return { verified: true };
  const problem = problems[0]!;
  if (problem === "signature is missing") return { verified: false, reason: "SIGNATURE_MISSING" };
  if (problem === "signature does not verify") return { verified: false, reason: "SIGNATURE_INVALID" };
  return { verified: false, reason: "SIGNATURE_MALFORMED" };
}

describe("runtime/test/fixtures/signing/vectors.json", () => {
  it("is there and holds every payloadType and every invalid kind", () => {
    expect(runtimeVectors.length).toBeGreaterThanOrEqual(19);
    expect(new Set(runtimeVectors.map((v) => v.payloadType)).size).toBe(9);
  });

  it.each(runtimeVectors.map((v) => [v.name, v] as const))("%s: the suite derives the same JCS and PAE bytes", (_name, v) => {
    const body = signedBody({ ...v.object, signature: v.signature });
    expect(body.toString("utf8")).toBe(v.jcs);
    expect(pae(v.payloadType, body).toString("hex")).toBe(v.paeHex);
  });

  it.each(runtimeVectors.map((v) => [v.name, v] as const))("%s: the suite's verdict is the vector's", (_name, v) => {
    const got = verdict(
      { ...v.object, signature: v.signature },
      v.payloadType,
      v.trustedKeys.map((k) => k.pem),
    );
    expect(got.verified).toBe(v.valid);
    if (!v.valid) {
      // writ names an unpinned key KEY_NOT_TRUSTED; the suite, holding one pinned key, sees a signature that does not verify.
      expect(got.reason).toBe(v.reason === "KEY_NOT_TRUSTED" ? "SIGNATURE_INVALID" : v.reason);
    }
  });
});

interface ConformanceVectorFile {
  readonly kind: string;
  readonly payloadType: string;
  readonly vectors: readonly {
    readonly id: string;
    readonly publicKey: string;
    readonly json: string;
    readonly expected: { verified: boolean; reason?: string };
  }[];
}

const vectorsDir = new URL("conformance/vectors/", REPO);
/**
 * The audit log vectors (audit-log.json) have their own form; their checkpoint signatures are checked below. The decision
 * vectors (decisions.json) sign nothing: compiler/test/decision-vectors.test.ts checks them.
 */
const AUDIT_LOG_FILE = "audit-log.json";
const DECISIONS_FILE = "decisions.json";
const vectorFiles = existsSync(vectorsDir)
  ? readdirSync(vectorsDir)
      .filter((f) => f.endsWith(".json") && f !== AUDIT_LOG_FILE && f !== DECISIONS_FILE)
      .sort()
  : [];

describe.runIf(vectorFiles.length > 0)("conformance/vectors/*.json", () => {
  const cases = vectorFiles.flatMap((file) => {
    const parsed = JSON.parse(readFileSync(new URL(file, vectorsDir), "utf8")) as ConformanceVectorFile;
    return parsed.vectors.map((v) => [`${file} ${v.id}`, parsed.payloadType, v] as const);
  });

  it.each(cases)("%s", (_name, payloadType, v) => {
    let object: unknown;
    try {
      object = parseStrictJson(v.json);
    } catch {
      expect(v.expected).toEqual({ verified: false, reason: "JSON_INVALID" });
      return;
    }
    const got = verdict(object, payloadType, [v.publicKey]);
    expect(got.verified).toBe(v.expected.verified);
    if (!v.expected.verified) expect(got.reason).toBe(v.expected.reason === "KEY_NOT_TRUSTED" ? "SIGNATURE_INVALID" : v.expected.reason);
  });
});

interface AuditLogVectors {
  readonly payloadType: string;
  readonly publicKey: string;
  readonly checkpoints: readonly {
    readonly id: string;
    readonly json: string;
    readonly expected: { valid: boolean; errors?: readonly string[] };
  }[];
}

const auditLogPath = new URL(AUDIT_LOG_FILE, vectorsDir);

describe.runIf(existsSync(auditLogPath))("conformance/vectors/audit-log.json: checkpoint signatures", () => {
  const file = existsSync(auditLogPath)
    ? (JSON.parse(readFileSync(auditLogPath, "utf8")) as AuditLogVectors)
    : { payloadType: "", publicKey: "", checkpoints: [] };

  it("are in the audit checkpoint domain", () => {
    expect(file.payloadType).toBe("application/vnd.writ.audit-checkpoint.v1+json");
    expect(file.checkpoints.length).toBeGreaterThanOrEqual(8);
  });

  // A checkpoint refused for its frontier or timestamp still carries a genuine signature; one refused for its
  // signature or key names that in its errors.
  it.each(file.checkpoints.map((v) => [v.id, v] as const))("%s: the suite's signature verdict is the vector's", (_name, v) => {
    const signatureRefused = (v.expected.errors ?? []).some((e) => /signature does not verify|is not pinned/.test(e));
    expect(verdict(parseStrictJson(v.json), file.payloadType, [file.publicKey]).verified).toBe(v.expected.valid || !signatureRefused);
  });
});

describe("signatures made here", () => {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const pem = publicKey.export({ type: "spki", format: "pem" }).toString();
  const key = pinPublicKey(pem);
  const type = "application/vnd.writ.execution-proof.v1+json";
  const signed = (object: Record<string, unknown>, omit: readonly string[] = []) => ({
    ...object,
    signature: sign(null, pae(type, signedBody(object, omit)), privateKey).toString("base64"),
  });

  it("verify as an object and as the canonical JSON string of one (the confirm-execution proof)", () => {
    const proof = signed({ executionId: "e1", match: true, nested: { signature: "kept" } });
    expect(signatureProblem({ value: proof, payloadType: type }, key)).toBeNull();
    expect(signatureProblem({ value: JSON.stringify(proof), payloadType: type, jcsString: true }, key)).toBeNull();
    expect(signatureProblem({ value: JSON.stringify({ ...proof, match: false }), payloadType: type, jcsString: true }, key)).toBe(
      "signature does not verify",
    );
    expect(signatureProblem({ value: '{"a":1,"a":2}', payloadType: type, jcsString: true }, key)).toBe(
      "the string is not strict JSON: duplicate key `a` at line 1 column 8",
    );
    expect(signatureProblem({ value: proof, payloadType: type, jcsString: true }, key)).toBe(
      "expected a string holding canonical JSON, got object",
    );
  });

  it("cover nested `signature` members and leave out only the top-level one and the omitted members", () => {
    const record = signed({ id: "r1", content: { signature: "inner" }, verification: { status: "VERIFIED" } }, ["verification"]);
    expect(signatureProblem({ value: record, payloadType: type, omit: ["verification"] }, key)).toBeNull();
    expect(
      signatureProblem({ value: { ...record, verification: { status: "FAILED" } }, payloadType: type, omit: ["verification"] }, key),
    ).toBeNull();
    expect(signatureProblem({ value: record, payloadType: type }, key)).toBe("signature does not verify");
    expect(
      signatureProblem({ value: { ...record, content: { signature: "changed" } }, payloadType: type, omit: ["verification"] }, key),
    ).toBe("signature does not verify");
  });

  it("are bound to their payloadType", () => {
    const proof = signed({ executionId: "e1" });
    expect(signatureProblem({ value: proof, payloadType: "application/vnd.writ.attestation.v1+json" }, key)).toBe(
      "signature does not verify",
    );
  });

  it("say what is wrong with a missing or malformed signature", () => {
    const proof = signed({ executionId: "e1" });
    const { signature: _removed, ...unsigned } = proof;
    expect(signatureProblem({ value: unsigned, payloadType: type }, key)).toBe("signature is missing");
    expect(signatureProblem({ value: { ...proof, signature: 42 }, payloadType: type }, key)).toBe("signature is not a string (number)");
    expect(signatureProblem({ value: [proof], payloadType: type }, key)).toBe("the signed value is not a JSON object");
    expect(signatureProblem({ value: { ...proof, signature: proof.signature.replace(/==$/, "") }, payloadType: type }, key)).toBe(
      "signature is not 88 characters of padded standard base64",
    );
  });
});

describe("decodeSignature: one canonical spelling", () => {
  const valid = Buffer.alloc(64, 7).toString("base64");

  it("accepts padded standard base64 of 64 bytes", () => {
    expect(decodeSignature(valid)).toEqual({ ok: true, bytes: Buffer.alloc(64, 7) });
  });

  it.each([
    ["unpadded", valid.replace(/==$/, "")],
    ["URL-safe", Buffer.alloc(64, 0xfb).toString("base64url") + "=="],
    ["with a blank", ` ${valid.slice(1)}`],
    ["63 bytes", Buffer.alloc(63, 7).toString("base64")],
    ["unused bits set", valid.slice(0, 85) + "x=="],
  ])("refuses %s", (_name, text) => {
    expect(decodeSignature(text).ok).toBe(false);
  });
});

describe("pinning a key (docs/signing.md, which keys are accepted)", () => {
  it.each(SMALL_ORDER_KEYS.map((hex) => [hex]))("refuses the small-order point %s", (hex) => {
    expect(keyProblem(Buffer.from(hex, "hex"))).toMatch(/small-order point/);
  });

  it("refuses non-canonical encodings and wrong lengths", () => {
    const p = Buffer.from("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", "hex");
    expect(keyProblem(p)).toBe("non-canonical point encoding (y >= p)");
    expect(keyProblem(Buffer.from("0100000000000000000000000000000000000000000000000000000000000080", "hex"))).toBe(
      "non-canonical point encoding (x = 0 with the sign bit set)",
    );
    expect(keyProblem(Buffer.alloc(31))).toBe("an Ed25519 public key is 32 bytes, this one is 31");
  });

  it("accepts an honest key and derives its keyId", () => {
    const vector = runtimeVectors.find((v) => v.name === "attestation-valid")!;
    expect(pinPublicKey(vector.trustedKeys[0]!.pem).keyId).toBe("21fe31dfa154a261626bf854046fd227");
  });

  it("refuses what is not an Ed25519 public key", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ type: "spki", format: "pem" }).toString();
    expect(() => pinPublicKey(rsa)).toThrow("not an Ed25519 key (it is rsa)");
    expect(() => pinPublicKey("not a key")).toThrow(/^not a PEM public key: /);
  });
});
