/**
 * The canonical JSON text of a variant 1 attestation body, written without the generic walk: signing spends most of
 * its non-curve work on the canonical form (docs/benchmarks.md, "Runtime"). The body's shape is fixed, so its JCS
 * member order is too: the members are written in that order, each value through `canonicalJson` (which validates it
 * as the walk would). The nine values that are the same for every decision under one bundle, signer and runtime
 * (`policyId` to `schemaVersion`, `provenance` included) are written once per such triple and reused.
 *
 * INVARIANT (the body text is JCS): `attestationBodyText(body) === canonicalJson(body)` for every body
 * `attestationBody` builds. The constant text is reused only when each of its values is `===` to the body's, so a
 * stale entry cannot put one bundle's provenance under another's signature (runtime/test/attest/attestation-text.test.ts).
 */
import { CanonicalizationError } from "../errors.js";
import { canonicalJson } from "../canonical/jcs.js";
import type { AttestationV1 } from "@writ/wire/types";

export type AttestationBody = Omit<AttestationV1, "signature">;

const BODY_MEMBERS = 14;
const PROVENANCE_MEMBERS = 5;

type ConstantValues = Pick<
  AttestationBody,
  "policyId" | "policyVersion" | "provenance" | "runtimeHash" | "runtimeVersion" | "schemaVersion"
>;

interface ConstantText {
  readonly values: ConstantValues;
  /** `,"policyId":…,"schemaVersion":…`: the run of members between `issuedAt` and `signalsHash` in JCS order. */
  readonly text: string;
}

/** By bundle hash; bounded, since a sidecar serves a handful of bundles and each entry is small. */
const constants = new Map<string, ConstantText>();
const CONSTANTS_LIMIT = 256;

function sameConstants(a: ConstantValues, b: AttestationBody): boolean {
  const p = a.provenance;
  const q = b.provenance;
  return (
    a.policyId === b.policyId &&
    a.policyVersion === b.policyVersion &&
    a.runtimeHash === b.runtimeHash &&
    a.runtimeVersion === b.runtimeVersion &&
    a.schemaVersion === b.schemaVersion &&
    p.provenanceVersion === q.provenanceVersion &&
    p.bundleHash === q.bundleHash &&
    p.manifestHash === q.manifestHash &&
    p.trustRootVersion === q.trustRootVersion &&
    p.signerKeyId === q.signerKeyId
  );
}

function constantText(body: AttestationBody): string {
  const cached = constants.get(body.provenance.bundleHash);
  if (cached !== undefined && sameConstants(cached.values, body)) return cached.text;
  const values: ConstantValues = {
    policyId: body.policyId,
    policyVersion: body.policyVersion,
    provenance: { ...body.provenance },
    runtimeHash: body.runtimeHash,
    runtimeVersion: body.runtimeVersion,
    schemaVersion: body.schemaVersion,
  };
  // `{"policyId":…}` without its braces; `canonicalJson` validates every value and orders the six members.
  const text = "," + canonicalJson(values).slice(1, -1);
  if (constants.size >= CONSTANTS_LIMIT) constants.clear();
  constants.set(body.provenance.bundleHash, { values, text });
  return text;
}

function hasMembers(value: object, count: number): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && Object.keys(value).length === count;
}

/** The JCS text of `body` (see the INVARIANT above). @throws CanonicalizationError as `canonicalJson` would */
export function attestationBodyText(body: AttestationBody): string {
  const { decision, provenance } = body;
  const { outcome } = decision;
  // Every member below is read, and a missing one is undefined, which canonicalJson refuses: with these counts the
  // member sets are exactly the written ones.
  if (
    !hasMembers(body, BODY_MEMBERS) ||
    !hasMembers(provenance, PROVENANCE_MEMBERS) ||
    !hasMembers(decision, 2) ||
    !hasMembers(outcome, 3)
  ) {
    throw new CanonicalizationError("attestation body does not have the members of a variant 1 attestation");
  }
  // Members in JCS order (sorted by UTF-16 code units: `_` sorts after the letters, so `executionId` precedes
  // `execution_fingerprint`).
  return (
    `{"actionBinding":${canonicalJson(body.actionBinding)}` +
    `,"actionType":${canonicalJson(body.actionType)}` +
    `,"decision":{"outcome":{"action":${canonicalJson(outcome.action)},"reason":${canonicalJson(outcome.reason)}` +
    `,"requires_override":${canonicalJson(outcome.requires_override)}},"status":${canonicalJson(decision.status)}}` +
    `,"executionId":${canonicalJson(body.executionId)}` +
    `,"execution_fingerprint":${canonicalJson(body.execution_fingerprint)}` +
    `,"execution_state":${canonicalJson(body.execution_state)}` +
    `,"issuedAt":${canonicalJson(body.issuedAt)}` +
    constantText(body) +
    `,"signalsHash":${canonicalJson(body.signalsHash)}}`
  );
}

/**
 * The JCS text of the signed attestation: `bodyText` (its body's, `attestationBodyText`) with `signature` added.
 * `signature` sorts after every member of the body (`signalsHash`, the last, differs from it at `l` < `t`), so it is
 * the last member. A signature is standard base64 (`sign.ts`), which needs no escaping in a JSON string.
 * INVARIANT (one serialization of an attestation): the text parses to the signed attestation, and is what the record
 * stores and the answer sends (runtime/test/attest/attestation-text.test.ts checks it equals `canonicalJson` of it).
 */
export function signedAttestationText(bodyText: string, signature: string): string {
  return `${bodyText.slice(0, -1)},"signature":"${signature}"}`;
}
