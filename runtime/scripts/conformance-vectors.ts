/**
 * Generates the conformance suite's signature vectors (docs/conformance.md, "Signature vectors"):
 * conformance/vectors/attestations.json, override-records.json and execution-proofs.json; and the audit log vectors,
 * conformance/vectors/audit-log.json (audit-log-vectors.ts beside this script; docs/conformance.md, "Audit log vectors").
 *
 *     npx tsx runtime/scripts/conformance-vectors.ts           writes the four files
 *     npx tsx runtime/scripts/conformance-vectors.ts --check   exits 1 when a committed file differs
 *
 * The signed objects are real: made by the runtime's own code paths (the Authorizer's `evaluate` for variant 1
 * attestations, its legacy `execute` for variant 2, `resolveOverride` for override records, `confirmExecution` for
 * execution integrity proofs) over a bundle of the conformance fixture policy `conformance.transfer` 1.0.0, written
 * here byte for byte as the compiler emits it. Everything that could vary is fixed: the keys come from fixed seeds
 * (the RFC 8032 section 7.1 TEST 1 and TEST 2 secret keys, public test material never to be used for anything else),
 * the clock is fixed, execution ids are fixed, and Ed25519 signing is deterministic, so every run writes the same
 * bytes. One value the runtime draws at random, the override record's `overrideId`, is replaced by a fixed UUID and
 * the record signed again with the runtime's `signObject`. Two attestations stand for other releases (docs/attestations.md,
 * "Runtime upgrades"): an approved one re-signed as an earlier release with the same decision semantics would sign it,
 * and as a later release whose evaluator semantics changed would; each carries `defaultVerification`, the result a
 * verifier with default options must give. runtime/test/fixtures/conformance-vectors.test.ts
 * regenerates the files in memory and checks them against the committed ones, then checks every vector's expected
 * result with the runtime's verification functions.
 */
import { createPrivateKey } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import semver from "semver";
import {
  Authorizer,
  BUNDLE_FILES,
  MANIFEST_FILE,
  MemoryReplayStore,
  PAYLOAD_TYPES,
  PolicyRegistry,
  RUNTIME_HASH,
  RUNTIME_VERSION,
  buildManifest,
  canonicalJson,
  confirmExecution,
  createRuntimeIdentity,
  createSigner,
  createTrustRoot,
  executedActionOf,
  loadSigningKeyPem,
  resolveOverride,
  runtimeDefinition,
  runtimeHashOf,
  serializeJson,
  sha256Hex,
  signObject,
  type ExecutedActionRequest,
  type PayloadType,
  type PublicKey,
  type Signer,
  type SigningKey,
} from "../src/index.js";
import { signCanonical } from "../src/signing/sign.js";
import { AUDIT_LOG_FILE, auditLogVectors, type AuditLogVectorFile } from "./audit-log-vectors.js";

// ---- the format of docs/conformance.md ------------------------------------------------------------------------

/** The closed list of reasons a vector is refused (conformance/vectors/README.md). */
export const VECTOR_REASONS = [
  "JSON_INVALID",
  "KEY_SMALL_ORDER",
  "KEY_NOT_TRUSTED",
  "SIGNATURE_MISSING",
  "SIGNATURE_MALFORMED",
  "SIGNATURE_INVALID",
] as const;
export type VectorReason = (typeof VECTOR_REASONS)[number];

export type VectorKind = "attestation" | "override-record" | "execution-proof";

export interface Vector {
  readonly id: string;
  readonly description: string;
  /** The pinned key, SPKI PEM. */
  readonly publicKey: string;
  /** The object exactly as received (raw JSON text). */
  readonly json: string;
  readonly expected: { readonly verified: true } | { readonly verified: false; readonly reason: VectorReason };
  /** Attestation vectors of another release only: what writ's `verifyAttestation` answers with default options. */
  readonly defaultVerification?: DefaultVerification;
}

/** docs/attestations.md, "Runtime upgrades": the runtime check of a verifier that pins nothing but the key. */
export interface DefaultVerification {
  /** The runtime hashes a verifier of this release accepts by default: its own `runtimeHash`. */
  readonly acceptedRuntimeHashes: readonly string[];
  readonly valid: boolean;
  /** The checks of the library form (spec 2.10) that fail; empty when `valid`. */
  readonly failedChecks: readonly string[];
}

export interface VectorFile {
  readonly kind: VectorKind;
  readonly payloadType: PayloadType;
  readonly vectors: readonly Vector[];
}

/** File name per kind, under conformance/vectors/. */
export const VECTOR_FILES: Readonly<Record<VectorKind, string>> = {
  attestation: "attestations.json",
  "override-record": "override-records.json",
  "execution-proof": "execution-proofs.json",
};

const PAYLOAD_TYPE_OF: Readonly<Record<VectorKind, PayloadType>> = {
  attestation: PAYLOAD_TYPES.attestation,
  "override-record": PAYLOAD_TYPES.override,
  "execution-proof": PAYLOAD_TYPES.executionProof,
};

// ---- fixed material ---------------------------------------------------------------------------------------------

/** RFC 8032 section 7.1 TEST 1 (the pinned signer) and TEST 2 (a key nobody pins) secret keys. */
export const VECTOR_SEEDS = {
  signer: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
  unpinned: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
} as const;

const TRUST_ROOT_VERSION = "writ-conformance-vectors-1";

/** The conformance fixture policy, conformance/fixtures/policies/conformance.transfer/1.0.0/policy.writ. */
const POLICY_SOURCE = `# Conformance fixture (issue 7): a transfer policy whose every outcome a conformance case can reach.
policy "conformance.transfer" version "1.0.0"

governs "transfer.execute" binding amount, currency

signals {
  amount: number >= 0
  currency: "USD" | "EUR" | "GBP"
  kyc_verified: boolean
  risk_score: integer 0..100
  reference?: string matching /^[A-Z0-9-]{1,64}$/
}

rule risk_too_high when risk_score > 80 reject "risk too high"
rule large_transfer when amount > 10000 escalate "large transfer requires approval"
rule verified_customer when kyc_verified approve "verified customer"

otherwise reject "customer not verified"
`;

/** What `writ compile` emits for POLICY_SOURCE (policy.ir.json). */
const POLICY_IR = {
  irVersion: 1,
  policyId: "conformance.transfer",
  version: "1.0.0",
  governs: { action: "transfer.execute", binding: ["amount", "currency"] },
  signals: {
    amount: { type: "number", optional: false },
    currency: { type: "enum", optional: false },
    kyc_verified: { type: "boolean", optional: false },
    risk_score: { type: "integer", optional: false },
    reference: { type: "string", optional: true },
  },
  rules: [
    {
      id: "risk_too_high",
      verdict: "reject",
      reason: "risk too high",
      when: { op: "cmp", cmp: "gt", kind: "number", left: { op: "signal", name: "risk_score" }, right: { op: "lit", value: 80 } },
    },
    {
      id: "large_transfer",
      verdict: "escalate",
      reason: "large transfer requires approval",
      when: { op: "cmp", cmp: "gt", kind: "number", left: { op: "signal", name: "amount" }, right: { op: "lit", value: 10000 } },
    },
    { id: "verified_customer", verdict: "approve", reason: "verified customer", when: { op: "signal", name: "kyc_verified" } },
  ],
  otherwise: { verdict: "reject", reason: "customer not verified" },
};

/** What `writ compile` emits for POLICY_SOURCE (signals.schema.json). */
const SIGNALS_SCHEMA = {
  $schema: "http://json-schema.org/draft-07/schema#",
  title: "signals of conformance.transfer@1.0.0",
  type: "object",
  properties: {
    amount: { type: "number", minimum: 0 },
    currency: { type: "string", enum: ["USD", "EUR", "GBP"] },
    kyc_verified: { type: "boolean" },
    risk_score: { type: "integer", minimum: 0, maximum: 100 },
    reference: { type: "string", pattern: "^[A-Z0-9-]{1,64}$" },
  },
  required: ["amount", "currency", "kyc_verified", "risk_score"],
  additionalProperties: false,
};

const POLICY = { policyId: "conformance.transfer", policyVersion: "1.0.0" } as const;

/** Fixed execution ids (UUID v4 form, as a Surface B businessTransactionId would be). */
const ID = {
  approved: "3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f01",
  pending: "3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f02",
  rejected: "3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f03",
  legacyApproved: "3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f04",
  legacyPending: "3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f05",
  /** An id holding U+FFFD: the counterpart of the lone-surrogate vector. */
  replacement: "conformance-vector-\ufffd-1",
  overrideApproved: "3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f11",
  overrideRejected: "3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f12",
  overrideReplacement: "3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f13",
  proofMatch: "3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f21",
  proofMismatch: "3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f22",
  proofReplacement: "3f0c8a52-6d1e-4c7a-9b1e-5a0d2c4e6f23",
} as const;

/** The fixed overrideIds that replace resolveOverride's random ones. */
const OVERRIDE_ID = {
  approved: "7b2e4d10-9c3a-4f5e-8a61-0d9c8b7a6e01",
  rejected: "7b2e4d10-9c3a-4f5e-8a61-0d9c8b7a6e02",
  replacement: "7b2e4d10-9c3a-4f5e-8a61-0d9c8b7a6e03",
} as const;

const T0 = Date.parse("2026-01-15T09:00:00.000Z");
const at = (seconds: number): Date => new Date(T0 + seconds * 1000);

/**
 * Other releases of the runtime, as attestations name them: an earlier one deciding the same way (the same
 * `runtimeHash`), and a later major one whose evaluator semantics changed (another `runtimeHash`).
 */
const RELEASES = {
  earlier: { runtimeVersion: earlierVersion(RUNTIME_VERSION), runtimeHash: RUNTIME_HASH },
  otherSemantics: {
    runtimeVersion: `${semver.major(RUNTIME_VERSION) + 1}.0.0`,
    runtimeHash: runtimeHashOf({ ...runtimeDefinition(), evaluatorSemantics: "writ.evaluator/first-match/kleene/v3" }),
  },
} as const;

/** A release before `version`: one patch lower, or the last patch of the minor (major) before, as 9. */
function earlierVersion(version: string): string {
  const v = semver.parse(version);
  if (v === null) throw new Error(`runtime version ${version} is not semver`);
  if (v.patch > 0) return `${v.major}.${v.minor}.${v.patch - 1}`;
  if (v.minor > 0) return `${v.major}.${v.minor - 1}.9`;
  if (v.major > 0) return `${v.major - 1}.9.9`;
  throw new Error("no release comes before 0.0.0");
}

const SIGNALS = {
  approved: { amount: 250, currency: "USD", kyc_verified: true, risk_score: 10 },
  pending: { amount: 25000, currency: "EUR", kyc_verified: true, risk_score: 20 },
  rejected: { amount: 250, currency: "GBP", kyc_verified: true, risk_score: 95 },
} as const;

// ---- keys -----------------------------------------------------------------------------------------------------

const PKCS8_ED25519_PREFIX = "302e020100300506032b657004220420";
const SPKI_ED25519_PREFIX = "302a300506032b6570032100";

function keyFromSeed(seedHex: string): SigningKey {
  const der = Buffer.concat([Buffer.from(PKCS8_ED25519_PREFIX, "hex"), Buffer.from(seedHex, "hex")]);
  return loadSigningKeyPem(
    createPrivateKey({ key: der, format: "der", type: "pkcs8" }).export({ format: "pem", type: "pkcs8" }).toString(),
  );
}

/** SPKI PEM of any 32 bytes, built by hand: the runtime refuses to load a small-order key, so it cannot make one. */
function spkiPem(raw: Uint8Array): string {
  const b64 = Buffer.concat([Buffer.from(SPKI_ED25519_PREFIX, "hex"), raw]).toString("base64");
  return `-----BEGIN PUBLIC KEY-----\n${b64}\n-----END PUBLIC KEY-----\n`;
}

/** The identity point (0x01 then 31 zero bytes): of small order. */
const IDENTITY_KEY = (() => {
  const raw = new Uint8Array(32);
  raw[0] = 1;
  return raw;
})();

// ---- signature bytes ------------------------------------------------------------------------------------------

/** The order of the Ed25519 base point. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

const BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** The same R with S + L: the same signature to a verifier that reduces S modulo L, refused by RFC 8032 5.1.7. */
function malleated(signature: string): string {
  const bytes = Buffer.from(signature, "base64");
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(bytes[i] ?? 0);
  s += L;
  if (s >= 2n ** 256n) throw new Error("S + L does not fit in 32 bytes");
  for (let i = 32; i < 64; i++) {
    bytes[i] = Number(s & 0xffn);
    s >>= 8n;
  }
  return bytes.toString("base64");
}

/** The same 64 bytes for a lenient decoder: the 4 unused low bits of the last character set. */
function withTrailingBits(signature: string): string {
  const last = BASE64_ALPHABET.indexOf(signature.charAt(85));
  const changed = BASE64_ALPHABET.charAt(last | 0x0f);
  if (changed === signature.charAt(85)) throw new Error("the unused bits are already set");
  return `${signature.slice(0, 85)}${changed}==`;
}

/** R = identity, S = 0: node:crypto (OpenSSL) accepts it with the identity key, on every message. */
const ZERO_S_SIGNATURE = (() => {
  const bytes = Buffer.alloc(64);
  bytes[0] = 1;
  return bytes.toString("base64");
})();

const ALL_ZERO_SIGNATURE = Buffer.alloc(64).toString("base64");

// ---- objects --------------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

/** A deep copy with one leaf replaced, the path given member by member. */
function changed(object: Json, path: readonly string[], value: unknown): Json {
  const copy = structuredClone(object);
  let node: Json = copy;
  for (const name of path.slice(0, -1)) {
    const next = node[name];
    if (typeof next !== "object" || next === null) throw new Error(`no object at ${path.join(".")}`);
    node = next as Json;
  }
  const leaf = path[path.length - 1];
  if (leaf === undefined || !Object.hasOwn(node, leaf)) throw new Error(`no member at ${path.join(".")}`);
  if (canonicalJson(node[leaf]) === canonicalJson(value)) throw new Error(`${path.join(".")} already has that value`);
  node[leaf] = value;
  return copy;
}

/** The object with its signature member set to `signature`, in the same member position. */
function withSignature(object: Json, signature: string): Json {
  if (!Object.hasOwn(object, "signature")) throw new Error("object has no signature member");
  return { ...object, signature };
}

function withoutSignature(object: Json): Json {
  const { signature: _signature, ...rest } = object;
  return rest;
}

function signatureOf(object: Json): string {
  const s = object["signature"];
  if (typeof s !== "string") throw new Error("object has no signature");
  return s;
}

/** The JSON text with `member` first given another value: a duplicate member name, the original kept last. */
function withLeadingDuplicate(object: Json, member: string, value: unknown): string {
  if (!Object.hasOwn(object, member)) throw new Error(`no member ${member}`);
  const text = JSON.stringify(object);
  return `{${JSON.stringify(member)}:${JSON.stringify(value)},${text.slice(1)}`;
}

/** The JSON text with U+FFFD written as the escape of a lone high surrogate. */
function withLoneSurrogate(object: Json): string {
  const text = JSON.stringify(object);
  if (!text.includes("\ufffd")) throw new Error("no U+FFFD to replace");
  return text.replaceAll("\ufffd", "\\ud800");
}

// ---- the runtime, making real objects --------------------------------------------------------------------------

interface Made {
  readonly attestations: {
    readonly approved: Json;
    readonly pending: Json;
    readonly rejected: Json;
    readonly legacyApproved: Json;
    readonly legacyPending: Json;
    readonly replacement: Json;
    readonly earlierRelease: Json;
    readonly otherSemantics: Json;
  };
  readonly overrides: { readonly approved: Json; readonly rejected: Json; readonly replacement: Json };
  readonly proofs: { readonly match: Json; readonly mismatch: Json; readonly replacement: Json };
}

function writeBundle(root: string): void {
  const dir = join(root, POLICY.policyId, POLICY.policyVersion);
  mkdirSync(dir, { recursive: true });
  const utf8 = new TextEncoder();
  const files = new Map<string, Uint8Array>([
    [BUNDLE_FILES.source, utf8.encode(POLICY_SOURCE)],
    [BUNDLE_FILES.schema, utf8.encode(serializeJson(SIGNALS_SCHEMA))],
    [BUNDLE_FILES.ir, utf8.encode(serializeJson(POLICY_IR))],
  ]);
  const manifest = buildManifest(
    {
      policyId: POLICY.policyId,
      version: POLICY.policyVersion,
      governs: POLICY_IR.governs.action,
      compiler: { name: "writ", version: "0.1.0" },
    },
    files,
  );
  for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
  writeFileSync(join(dir, MANIFEST_FILE), serializeJson(manifest));
}

const asJson = (value: object): Json => JSON.parse(JSON.stringify(value)) as Json;

/**
 * `attestation` as `release` would have signed it: that release's runtimeVersion and runtimeHash, and the
 * manifestHash of its manifest (this runtime's manifest naming the release, signed again).
 */
function signedByRelease(
  release: { readonly runtimeVersion: string; readonly runtimeHash: string },
  attestation: Json,
  signer: Signer,
): Json {
  const { signature: _manifestSignature, ...manifest } = { ...createRuntimeIdentity(signer).manifest, ...release };
  const manifestHash = sha256Hex(
    canonicalJson({ ...manifest, signature: signObject(PAYLOAD_TYPES.runtimeManifest, manifest, signer.key) }),
  );
  const body = withoutSignature({ ...attestation, ...release, provenance: { ...(attestation["provenance"] as Json), manifestHash } });
  return { ...body, signature: signObject(PAYLOAD_TYPES.attestation, body, signer.key) };
}

async function makeObjects(signer: Signer): Promise<Made> {
  const root = mkdtempSync(join(tmpdir(), "writ-conformance-vectors-"));
  try {
    writeBundle(root);
    let clock = at(0);
    const now = (): Date => clock;
    const store = new MemoryReplayStore();
    const authorizer = new Authorizer({ registry: new PolicyRegistry(root), signer, store, now });
    const evaluate = async (executionId: string, signals: Json): Promise<Json> =>
      asJson((await authorizer.evaluate({ executionId, ...POLICY, signals })).attestation);
    const legacy = async (executionId: string, signals: Json): Promise<Json> =>
      asJson((await authorizer.execute({ executionId, ...POLICY, signals })).attestation);

    const approved = await evaluate(ID.approved, SIGNALS.approved);
    const attestations = {
      approved,
      pending: await evaluate(ID.pending, SIGNALS.pending),
      rejected: await evaluate(ID.rejected, SIGNALS.rejected),
      legacyApproved: await legacy(ID.legacyApproved, SIGNALS.approved),
      legacyPending: await legacy(ID.legacyPending, SIGNALS.pending),
      replacement: await evaluate(ID.replacement, SIGNALS.approved),
      earlierRelease: signedByRelease(RELEASES.earlier, approved, signer),
      otherSemantics: signedByRelease(RELEASES.otherSemantics, approved, signer),
    };

    // Overrides: an escalated decision, then a human's resolution five minutes later.
    const override = async (executionId: string, approved: boolean, reason: string, overrideId: string): Promise<Json> => {
      clock = at(0);
      await evaluate(executionId, SIGNALS.pending);
      clock = at(300);
      const outcome = await resolveOverride(
        { executionId, approved, approvedBy: "alice@example.com", approverRole: "treasury-manager", reason },
        { store, signer, now },
      );
      const { signature: _random, ...body } = { ...outcome.record, overrideId };
      return asJson({ ...body, signature: signObject(PAYLOAD_TYPES.override, body, signer.key) });
    };
    const overrides = {
      approved: await override(ID.overrideApproved, true, "supplier confirmed by phone", OVERRIDE_ID.approved),
      rejected: await override(ID.overrideRejected, false, "supplier could not be reached", OVERRIDE_ID.rejected),
      replacement: await override(ID.overrideReplacement, true, "confirmed in the ticket \ufffd see notes", OVERRIDE_ID.replacement),
    };

    // Proofs: an approved decision, executed a minute later, confirmed two minutes later.
    const proof = async (executionId: string, executed: Omit<ExecutedActionRequest, "actionTimestamp">): Promise<Json> => {
      clock = at(0);
      const attestation = await evaluate(executionId, SIGNALS.approved);
      clock = at(120);
      const made = await confirmExecution(attestation, executedActionOf({ ...executed, actionTimestamp: at(60).toISOString() }), 300, {
        verifier: { trustRoot: signer.trustRoot },
        signer,
        store,
        now,
      });
      return asJson(made);
    };
    const proofs = {
      match: await proof(ID.proofMatch, {
        actionType: "transfer.execute",
        actionId: "payment-000123",
        actionDetails: { amount: 250, currency: "USD" },
      }),
      mismatch: await proof(ID.proofMismatch, {
        actionType: "transfer.execute",
        actionId: "payment-000124",
        actionDetails: { amount: 2500, currency: "USD" },
      }),
      replacement: await proof(ID.proofReplacement, {
        actionType: "transfer.execute",
        actionId: "payment-\ufffd-000125",
        actionDetails: { amount: 250, currency: "USD" },
      }),
    };
    if (proofs.match["match"] !== true || proofs.mismatch["match"] !== false || proofs.replacement["match"] !== true) {
      throw new Error("the proofs do not have the intended match results");
    }
    return { attestations, overrides, proofs };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// ---- vectors ------------------------------------------------------------------------------------------------------

interface Keys {
  readonly signer: SigningKey;
  readonly unpinned: SigningKey;
}

/** What the negative vectors of one kind are made from. */
interface NegativeInputs {
  readonly prefix: string;
  readonly noun: string;
  /** The valid object most negative vectors alter. */
  readonly base: Json;
  readonly baseId: string;
  /** Another valid object of the same kind, whose signature is presented with `base`. */
  readonly other: Json;
  readonly otherId: string;
  readonly topLevel: { readonly path: readonly string[]; readonly value: unknown; readonly what: string };
  /** Absent when the kind has no nested member (override records are flat). */
  readonly nested?: { readonly path: readonly string[]; readonly value: unknown; readonly what: string };
  readonly wrongDomain: { readonly payloadType: PayloadType; readonly what: string };
  readonly duplicate: { readonly object: Json; readonly objectId: string; readonly member: string; readonly value: unknown };
  readonly replacement: Json;
  readonly replacementId: string;
  readonly added: { readonly member: string; readonly value: unknown };
}

function negatives(payloadType: PayloadType, keys: Keys, n: NegativeInputs): Vector[] {
  const pinned = keys.signer.publicKey.pem;
  const sign = (object: Json, type: PayloadType = payloadType): string => signObject(type, object, keys.signer);
  const text = (object: Json): string => JSON.stringify(object);
  const refused = (reason: VectorReason) => ({ verified: false, reason }) as const;
  const baseSig = signatureOf(n.base);
  const out: Vector[] = [];
  const add = (id: string, description: string, json: string, reason: VectorReason, publicKey = pinned): void => {
    out.push({ id: `${n.prefix}-${id}`, description, publicKey, json, expected: refused(reason) });
  };

  add(
    "changed-top-level-leaf",
    `${n.baseId} with ${n.topLevel.what} after signing`,
    text(changed(n.base, n.topLevel.path, n.topLevel.value)),
    "SIGNATURE_INVALID",
  );
  if (n.nested) {
    add(
      "changed-nested-leaf",
      `${n.baseId} with ${n.nested.what} after signing`,
      text(changed(n.base, n.nested.path, n.nested.value)),
      "SIGNATURE_INVALID",
    );
  }
  add(
    "added-member",
    `${n.baseId} with a top-level member \`${n.added.member}\` added after signing`,
    text({ ...n.base, [n.added.member]: n.added.value }),
    "SIGNATURE_INVALID",
  );
  add("signature-removed", `${n.baseId} without its \`signature\` member`, text(withoutSignature(n.base)), "SIGNATURE_MISSING");
  add(
    "signature-of-another-object",
    `${n.baseId} carrying the (valid) signature of ${n.otherId}`,
    text(withSignature(n.base, signatureOf(n.other))),
    "SIGNATURE_INVALID",
  );
  add(
    "wrong-payload-type",
    `${n.baseId} signed by the pinned key in another domain: ${n.wrongDomain.what} (payloadType ${n.wrongDomain.payloadType}); a signature never verifies across domains`,
    text(withSignature(n.base, sign(withoutSignature(n.base), n.wrongDomain.payloadType))),
    "SIGNATURE_INVALID",
  );
  {
    // A faulty signer that did not leave the signature member out (an empty placeholder when it signed).
    const unsigned = { ...n.base, signature: "" };
    const signature = signCanonical(payloadType, canonicalJson(unsigned), keys.signer);
    add(
      "signature-member-included",
      `${n.baseId} signed over JCS of the object including its own \`signature\` member (empty when signing), not without it`,
      text(withSignature(n.base, signature)),
      "SIGNATURE_INVALID",
    );
  }
  add(
    "key-not-pinned",
    `${n.baseId}, valid under the key that signed it, but the pinned key is another one (RFC 8032 TEST 2); a key or keyId arriving with the object is never trusted`,
    text(n.base),
    "KEY_NOT_TRUSTED",
    keys.unpinned.publicKey.pem,
  );
  add(
    "small-order-key-zero-s",
    `${n.noun} with R = identity, S = 0 (AQAAAA...AA==) under the pinned identity key (small order): plain node:crypto accepts this pair for every message; the key must be refused`,
    text(withSignature(n.base, ZERO_S_SIGNATURE)),
    "KEY_SMALL_ORDER",
    spkiPem(IDENTITY_KEY),
  );
  add(
    "small-order-key-all-zero",
    `${n.noun} with an all-zero signature under the pinned identity key (small order); the key must be refused`,
    text(withSignature(n.base, ALL_ZERO_SIGNATURE)),
    "KEY_SMALL_ORDER",
    spkiPem(IDENTITY_KEY),
  );
  add(
    "signature-s-plus-l",
    `${n.baseId} with the signature's S replaced by S + L (the group order): valid base64 of 64 bytes, accepted by a verifier that reduces S; RFC 8032 requires S < L`,
    text(withSignature(n.base, malleated(baseSig))),
    "SIGNATURE_INVALID",
  );
  add(
    "signature-unpadded",
    `${n.baseId} with its signature's \`==\` padding removed (86 characters)`,
    text(withSignature(n.base, baseSig.replace(/=+$/, ""))),
    "SIGNATURE_MALFORMED",
  );
  {
    // A signature without + or / reads the same in both alphabets (about one in fifteen): then the other object's.
    const [object, objectId] =
      (
        [
          [n.base, n.baseId],
          [n.other, n.otherId],
        ] as const
      ).find(([o]) => /[+/]/.test(signatureOf(o))) ?? [];
    if (object === undefined) throw new Error(`neither ${n.baseId}'s nor ${n.otherId}'s signature has + or /`);
    const urlSafe = signatureOf(object).replaceAll("+", "-").replaceAll("/", "_");
    add(
      "signature-url-safe",
      `${objectId} with its signature in the URL-safe base64 alphabet (- and _), padded`,
      text(withSignature(object, urlSafe)),
      "SIGNATURE_MALFORMED",
    );
  }
  add(
    "signature-trailing-bits",
    `${n.baseId} with the unused low bits of the signature's last base64 character set: the same 64 bytes to a lenient decoder, not the one canonical spelling`,
    text(withSignature(n.base, withTrailingBits(baseSig))),
    "SIGNATURE_MALFORMED",
  );
  add(
    "signature-truncated",
    `${n.baseId} with a signature of its first 63 bytes (84 base64 characters)`,
    text(withSignature(n.base, Buffer.from(baseSig, "base64").subarray(0, 63).toString("base64"))),
    "SIGNATURE_MALFORMED",
  );
  add(
    "duplicate-member",
    `${n.duplicate.objectId} with \`${n.duplicate.member}\` also written once before the signed one with another value: a parser keeping the last verifies, one keeping the first reads the forged value; strict JSON refuses duplicate member names`,
    withLeadingDuplicate(n.duplicate.object, n.duplicate.member, n.duplicate.value),
    "JSON_INVALID",
  );
  add(
    "lone-surrogate",
    `${n.replacementId} with its U+FFFD written as the lone surrogate \\ud800: a lenient decoder turning it into U+FFFD verifies; strict JSON refuses lone surrogates`,
    withLoneSurrogate(n.replacement),
    "JSON_INVALID",
  );
  return out;
}

function valid(prefix: string, id: string, description: string, object: Json, keys: Keys): Vector {
  return {
    id: `${prefix}-${id}`,
    description,
    publicKey: keys.signer.publicKey.pem,
    json: JSON.stringify(object),
    expected: { verified: true },
  };
}

function vectorFiles(made: Made, keys: Keys): VectorFile[] {
  const { attestations: a, overrides: o, proofs: p } = made;
  const attestations: Vector[] = [
    valid("attestation", "v1-approved", "variant 1 attestation (POST /evaluate): approved, execution_state completed", a.approved, keys),
    valid(
      "attestation",
      "v1-pending-override",
      "variant 1 attestation: pending_override (escalated, requires_override true)",
      a.pending,
      keys,
    ),
    valid("attestation", "v1-rejected", "variant 1 attestation: rejected (risk too high)", a.rejected, keys),
    valid("attestation", "v2-approved", "variant 2 attestation (legacy POST /execute, flat provenance): approved", a.legacyApproved, keys),
    valid("attestation", "v2-pending-override", "variant 2 attestation (legacy POST /execute): pending_override", a.legacyPending, keys),
    valid(
      "attestation",
      "v1-replacement-character",
      "variant 1 attestation whose executionId holds U+FFFD (raw UTF-8 in the JSON text): the counterpart of attestation-lone-surrogate",
      a.replacement,
      keys,
    ),
    {
      ...valid(
        "attestation",
        "v1-earlier-release",
        `attestation-v1-approved as release ${RELEASES.earlier.runtimeVersion} signed it: an earlier release deciding the same way, so the same runtimeHash; a verifier with default options accepts it`,
        a.earlierRelease,
        keys,
      ),
      defaultVerification: { acceptedRuntimeHashes: [RUNTIME_HASH], valid: true, failedChecks: [] },
    },
    {
      ...valid(
        "attestation",
        "v1-other-semantics",
        `attestation-v1-approved as release ${RELEASES.otherSemantics.runtimeVersion} signed it after a change of evaluator semantics (writ.evaluator/first-match/kleene/v3), so another runtimeHash: the signature verifies, but a verifier with default options refuses the decision (its runtime check fails)`,
        a.otherSemantics,
        keys,
      ),
      defaultVerification: {
        acceptedRuntimeHashes: [RUNTIME_HASH],
        valid: false,
        failedChecks: ["runtime_verified", "evaluator_verified"],
      },
    },
    ...negatives(PAYLOAD_TYPES.attestation, keys, {
      prefix: "attestation",
      noun: "a variant 1 attestation",
      base: a.approved,
      baseId: "attestation-v1-approved",
      other: a.rejected,
      otherId: "attestation-v1-rejected",
      topLevel: { path: ["policyVersion"], value: "1.1.0", what: "policyVersion changed from 1.0.0 to 1.1.0" },
      nested: { path: ["actionBinding", "amount"], value: 25000, what: "actionBinding.amount changed from 250 to 25000" },
      wrongDomain: { payloadType: PAYLOAD_TYPES.override, what: "the attestation signed as an override record" },
      duplicate: { object: a.pending, objectId: "attestation-v1-pending-override", member: "execution_state", value: "completed" },
      replacement: a.replacement,
      replacementId: "attestation-v1-replacement-character",
      added: { member: "approvedBy", value: "mallory@example.com" },
    }),
  ];
  // The rejected decision read as an approval: the most tempting change of all.
  attestations.splice(
    attestations.findIndex((v) => v.id === "attestation-added-member"),
    0,
    {
      id: "attestation-changed-verdict",
      description: "attestation-v1-rejected with decision.outcome.action changed from reject to approve after signing",
      publicKey: keys.signer.publicKey.pem,
      json: JSON.stringify(changed(a.rejected, ["decision", "outcome", "action"], "approve")),
      expected: { verified: false, reason: "SIGNATURE_INVALID" },
    },
  );

  const overrides: Vector[] = [
    valid("override", "approved", "override record (spec 2.8 library form) of an approved override, signed", o.approved, keys),
    valid("override", "rejected", "override record of a rejected override (approved false), signed", o.rejected, keys),
    valid(
      "override",
      "replacement-character",
      "override record whose reason holds U+FFFD (raw UTF-8 in the JSON text): the counterpart of override-lone-surrogate",
      o.replacement,
      keys,
    ),
    ...negatives(PAYLOAD_TYPES.override, keys, {
      prefix: "override",
      noun: "an override record",
      base: o.approved,
      baseId: "override-approved",
      other: o.rejected,
      otherId: "override-rejected",
      topLevel: { path: ["approved_by"], value: "mallory@example.com", what: "approved_by changed to mallory@example.com" },
      wrongDomain: { payloadType: PAYLOAD_TYPES.attestation, what: "the override record signed as an attestation" },
      duplicate: { object: o.rejected, objectId: "override-rejected", member: "approved", value: true },
      replacement: o.replacement,
      replacementId: "override-replacement-character",
      added: { member: "approvedBy", value: "mallory@example.com" },
    }),
  ];
  overrides.splice(
    overrides.findIndex((v) => v.id === "override-added-member"),
    0,
    {
      id: "override-changed-approval",
      description: "override-rejected with approved changed from false to true after signing",
      publicKey: keys.signer.publicKey.pem,
      json: JSON.stringify(changed(o.rejected, ["approved"], true)),
      expected: { verified: false, reason: "SIGNATURE_INVALID" },
    },
  );

  const proofs: Vector[] = [
    valid(
      "proof",
      "match-true",
      "execution integrity proof (spec 2.9 library form): the executed action matched, match true",
      p.match,
      keys,
    ),
    valid(
      "proof",
      "match-false",
      "execution integrity proof of an executed amount that differs from the authorized one: payloadConsistent false, match false",
      p.mismatch,
      keys,
    ),
    valid(
      "proof",
      "replacement-character",
      "execution integrity proof whose executed.actionId holds U+FFFD (raw UTF-8 in the JSON text): the counterpart of proof-lone-surrogate",
      p.replacement,
      keys,
    ),
    ...negatives(PAYLOAD_TYPES.executionProof, keys, {
      prefix: "proof",
      noun: "an execution integrity proof",
      base: p.mismatch,
      baseId: "proof-match-false",
      other: p.match,
      otherId: "proof-match-true",
      topLevel: { path: ["match"], value: true, what: "match changed from false to true" },
      nested: {
        path: ["matchDetails", "payloadConsistent"],
        value: true,
        what: "matchDetails.payloadConsistent changed from false to true",
      },
      wrongDomain: { payloadType: PAYLOAD_TYPES.attestation, what: "the proof signed as an attestation" },
      duplicate: { object: p.mismatch, objectId: "proof-match-false", member: "match", value: true },
      replacement: p.replacement,
      replacementId: "proof-replacement-character",
      added: { member: "note", value: "confirmed by hand" },
    }),
  ];
  proofs.splice(
    proofs.findIndex((v) => v.id === "proof-added-member"),
    0,
    {
      id: "proof-changed-executed-payload",
      description: "proof-match-true with executed.payload.amount changed from 250 to 2500 after signing",
      publicKey: keys.signer.publicKey.pem,
      json: JSON.stringify(changed(p.match, ["executed", "payload", "amount"], 2500)),
      expected: { verified: false, reason: "SIGNATURE_INVALID" },
    },
  );

  const file = (kind: VectorKind, vectors: Vector[]): VectorFile => {
    const ids = new Set<string>();
    for (const v of vectors) {
      if (ids.has(v.id)) throw new Error(`duplicate vector id ${v.id}`);
      ids.add(v.id);
    }
    return { kind, payloadType: PAYLOAD_TYPE_OF[kind], vectors };
  };
  return [file("attestation", attestations), file("override-record", overrides), file("execution-proof", proofs)];
}

export interface GeneratedVectors {
  /** File name (under conformance/vectors/) to its exact text. */
  readonly files: ReadonlyMap<string, string>;
  /** The public keys the generator signed with: the pinned signer and the unpinned one. */
  readonly keys: { readonly signer: PublicKey; readonly unpinned: PublicKey };
}

/** Makes the four vector files in memory; the same bytes on every run. */
export async function generateConformanceVectors(): Promise<GeneratedVectors> {
  const keys: Keys = { signer: keyFromSeed(VECTOR_SEEDS.signer), unpinned: keyFromSeed(VECTOR_SEEDS.unpinned) };
  const signer = createSigner(keys.signer, createTrustRoot(TRUST_ROOT_VERSION, [keys.signer.publicKey]));
  const made = await makeObjects(signer);
  const files = new Map<string, string>();
  for (const f of vectorFiles(made, keys)) files.set(VECTOR_FILES[f.kind], `${JSON.stringify(f, null, 2)}\n`);
  files.set(AUDIT_LOG_FILE, `${JSON.stringify(auditLogVectors(keys), null, 2)}\n`);
  return { files, keys: { signer: keys.signer.publicKey, unpinned: keys.unpinned.publicKey } };
}

/** How many vectors a generated file holds. */
function vectorCount(name: string, text: string): number {
  if (name !== AUDIT_LOG_FILE) return (JSON.parse(text) as VectorFile).vectors.length;
  const f = JSON.parse(text) as AuditLogVectorFile;
  return f.inclusion.length + f.consistency.length + f.checkpoints.length + f.chains.length + f.proofs.length;
}

/** conformance/vectors/ of this repository. */
export const VECTORS_DIR = fileURLToPath(new URL("../../conformance/vectors/", import.meta.url));

async function main(argv: readonly string[]): Promise<number> {
  const check = argv.includes("--check");
  const { files } = await generateConformanceVectors();
  let stale = 0;
  for (const [name, text] of files) {
    const path = join(VECTORS_DIR, name);
    if (check) {
      let current: string | null;
      try {
        current = readFileSync(path, "utf8");
      } catch {
        current = null;
      }
      if (current !== text) {
        stale++;
        process.stderr.write(`${path} is stale: run npx tsx runtime/scripts/conformance-vectors.ts\n`);
      }
    } else {
      mkdirSync(VECTORS_DIR, { recursive: true });
      writeFileSync(path, text);
      process.stdout.write(`wrote ${path} (${vectorCount(name, text)} vectors)\n`);
    }
  }
  return stale === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
