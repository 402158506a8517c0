/**
 * Checks of a stored trust record. It is read back from disk, where it may have been changed into anything (even
 * bytes that are no longer JSON), so nothing here trusts its shape: every check reports a problem, never throws.
 *
 * - `checkSeal` (`POST /replay`): the record's signature, under the trust root's key `signerKeyId`, and that it is
 *   the record of the id it is stored under (a record copied under another id keeps a valid signature).
 * - `checkRecord` (`POST /verify`, the pipeline, `POST /receipt`): the seal, `trustRecordHash` against the content,
 *   the embedded attestation (the runtime's own verification, against the same trust root), and that the
 *   attestation decided this record: same executionId, policy, version, signals and outcome.
 */
import { randomUUID } from "node:crypto";
import {
  PAYLOAD_TYPES,
  VERDICT_STATUS,
  sha256Hex,
  signalsHash,
  trustedKey,
  verifyAttestation,
  verifyObject,
  type Verdict,
  type VerifierOptions,
} from "@writ/runtime";
import { trustRecordHashOf } from "./seal.js";
import type { StoredRecord } from "../trust-records/record-store.js";
import type { SealedRecord, Verification } from "../trust-records/types.js";

export type RecordCheck =
  | { readonly verified: true; readonly trustRecordHash: string; readonly record: SealedRecord }
  | { readonly verified: false; readonly trustRecordHash: string; readonly problems: readonly string[] };

type Json = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Problems with the record's signature; none when it verifies. */
function sealProblems(value: unknown, id: string, verifier: VerifierOptions): string[] {
  const { trustRoot } = verifier;
  if (!isObject(value)) return ["the stored record is not a JSON object"];
  if (value["businessTransactionId"] !== id) return [`the record stored under \`${id}\` is not the record of that id`];
  const { signature, signerKeyId } = value;
  if (typeof signature !== "string" || typeof signerKeyId !== "string") return ["the record has no signature or signerKeyId"];
  const key = trustedKey(trustRoot, signerKeyId);
  if (!key) return [`signer key \`${signerKeyId}\` is not in the trust root \`${trustRoot.version}\``];
  return verifyObject(PAYLOAD_TYPES.trustRecord, value, signature, [key], verifier.engine)
    ? []
    : ["the record signature does not verify: the record was changed after it was sealed"];
}

/** `trustRecordHash` of what is stored: of the record, or of its bytes when they are no longer JSON. */
function hashOf(stored: StoredRecord): string {
  return stored.state === "stored" ? trustRecordHashOf(stored.value) : sha256Hex(stored.text);
}

const UNREADABLE = "the stored record is not valid JSON";

export function checkSeal(
  stored: StoredRecord,
  id: string,
  verifier: VerifierOptions,
): { readonly verified: boolean; readonly trustRecordHash: string } {
  return { verified: stored.state === "stored" && sealProblems(stored.value, id, verifier).length === 0, trustRecordHash: hashOf(stored) };
}

/**
 * Problems with the attestation and its agreement with the record that carries it. `verifier` null: the attestation is
 * known to verify (`checkSealed`), only the agreement is checked.
 */
function executionProblems(record: Json, verifier: VerifierOptions | null): string[] {
  const execution = record["execution"];
  if (!isObject(execution) || !isObject(execution["attestation"])) return ["the record has no execution attestation"];
  const attestation = execution["attestation"];
  const problems: string[] = [];
  if (verifier !== null) {
    const verification = verifyAttestation(attestation, verifier);
    problems.push(...verification.errors.map((e) => `attestation: ${e}`));
    if (!verification.valid && problems.length === 0) problems.push("attestation does not verify");
  }
  const policy = isObject(record["policy"]) ? record["policy"] : {};
  const signals = isObject(record["signals"]) ? record["signals"] : null;
  if (attestation["executionId"] !== record["businessTransactionId"])
    problems.push("attestation executionId is not the businessTransactionId");
  if (attestation["policyId"] !== policy["name"] || attestation["policyVersion"] !== policy["version"])
    problems.push("attestation names another policy version");
  if (signals === null || attestation["signalsHash"] !== signalsHash(signals))
    problems.push("attestation signalsHash does not match the signals");
  const outcome =
    isObject(attestation["decision"]) && isObject(attestation["decision"]["outcome"]) ? attestation["decision"]["outcome"] : {};
  const state = Object.hasOwn(VERDICT_STATUS, String(outcome["action"])) ? VERDICT_STATUS[outcome["action"] as Verdict] : null;
  if (state === null || execution["status"] !== state.status || execution["requires_override"] !== state.requiresOverride) {
    problems.push("execution status does not match the attestation's decision");
  }
  return problems;
}

export function checkRecord(stored: StoredRecord, id: string, verifier: VerifierOptions): RecordCheck {
  const trustRecordHash = hashOf(stored);
  if (stored.state === "unreadable") return { verified: false, trustRecordHash, problems: [UNREADABLE] };
  const value = stored.value;
  const problems = sealProblems(value, id, verifier);
  if (isObject(value)) {
    if (value["trustRecordHash"] !== trustRecordHash) problems.push("trustRecordHash does not match the record's content");
    problems.push(...executionProblems(value, verifier));
  }
  if (problems.length > 0) return { verified: false, trustRecordHash, problems };
  // Sealed by a trusted key and consistent throughout: the value is a record this service wrote.
  return { verified: true, trustRecordHash, record: value as unknown as SealedRecord };
}

/**
 * The check of a record this process has just sealed (the pipeline), without verifying again what signing verified:
 * its seal and its attestation were each self-verified when signed (spec 2.2), with the signer's key, which is the trust
 * root's key `signerKeyId` (runtime `createSigner` refuses any other), over the texts `checkRecord` would verify; and its
 * `trustRecordHash` was computed from this content by `sealRecord`. What construction could still get wrong is checked:
 * the record is the id's, and its attestation decided it (executionId, policy, version, signals, outcome).
 * INVARIANT (a freshly sealed record verifies): `checkRecord` of what the pipeline stores verifies as this does
 * (sidecar/test/surface-b/check.test.ts).
 */
export function checkSealed(record: SealedRecord, id: string): RecordCheck {
  const value = record as unknown as Json;
  const problems =
    value["businessTransactionId"] === id ? executionProblems(value, null) : [`the record sealed for \`${id}\` is not its record`];
  if (problems.length > 0) return { verified: false, trustRecordHash: record.trustRecordHash, problems };
  return { verified: true, trustRecordHash: record.trustRecordHash, record };
}

const VERIFIED_MESSAGE = "record signature, trustRecordHash and execution attestation verified";

/** The check as spec 2.13's verification response: a fresh verificationId, `message` listing what failed. */
export function verificationOf(id: string, check: RecordCheck, verifiedAt: string): Verification {
  return {
    verificationId: randomUUID(),
    businessTransactionId: id,
    status: check.verified ? "VERIFIED" : "FAILED",
    message: check.verified ? VERIFIED_MESSAGE : check.problems.join("; "),
    verifiedAt,
    trustRecordHash: check.trustRecordHash,
  };
}
