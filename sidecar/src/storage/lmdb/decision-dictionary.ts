/**
 * The dictionary this release compresses the decision records of a new data dir with (decision-records.ts): LZ4 finds
 * in it what a record repeats of every other one, so that a record stores little more than what is its own. It is the
 * text of three representative decision records (approved, escalated to an override, and rejected by `POST /execute`),
 * with every value unique to a record or a deployment left empty or generic; what a dictionary of the deployment's own
 * decisions would gain over it: docs/benchmarks.md, "Record pages".
 *
 * INVARIANT (a dictionary's bytes never change under its id): a data dir keeps the dictionary it started with, bytes
 * and id (decision-records.ts), so a release may ship another one under a new id without touching older data dirs;
 * editing this text without a new id would only mislead whoever compares ids.
 */

/** A dictionary of the decision records: its bytes and the id that names them. */
export interface RecordDictionary {
  readonly id: string;
  readonly bytes: Buffer;
}

const APPROVED =
  '{"executionId":"","endpoint":"evaluate","status":"approved","ruleMatched":"","attestation":{"executionId":"",' +
  '"execution_fingerprint":"","policyId":"","policyVersion":"1.0.0","schemaVersion":"1.0.0","runtimeVersion":"0.1.0",' +
  '"runtimeHash":"","actionType":"","actionBinding":{"amount":0,"currency":"USD","account":"","environment":"production"},' +
  '"issuedAt":"2026-01-01T00:00:00.000Z","signalsHash":"","execution_state":"completed","decision":{"status":"decided",' +
  '"outcome":{"action":"approve","requires_override":false,"reason":""}},"provenance":{"provenanceVersion":' +
  '"SERVICE_PROVENANCE_V1","bundleHash":"","manifestHash":"","trustRootVersion":"","signerKeyId":""},"signature":""},' +
  '"signalProvenance":{"source":""},"recordedAt":"2026-01-01T00:00:00.000Z"}';

const ESCALATED =
  '{"executionId":"","endpoint":"evaluate","status":"pending_override","ruleMatched":"","attestation":{"executionId":"",' +
  '"execution_fingerprint":"","execution_state":"pending_override","decision":{"status":"decided","outcome":' +
  '{"action":"escalate","requires_override":true,"reason":""}}},"recordedAt":"2026-01-01T00:00:00.000Z"}';

const REJECTED_LEGACY =
  '{"executionId":"","endpoint":"execute","status":"rejected","ruleMatched":"otherwise","attestation":{"executionId":"",' +
  '"execution_fingerprint":"","execution_state":"completed","decision":{"action":"reject","requires_override":false,' +
  '"reason":""},"bundleHash":"","manifestHash":"","manifestSignature":"","trustRootVersion":"","signerKeyId":"",' +
  '"evaluatorHash":"","evaluatorSemanticHash":"","evaluatorArtifactHash":"","releaseManifestHash":"","signature":""},' +
  '"recordedAt":"2026-01-01T00:00:00.000Z"}';

/** The dictionary a data dir created by this release compresses its decision records with. */
export const SHIPPED_DICTIONARY: RecordDictionary = {
  id: "decision-records-1",
  bytes: Buffer.from(REJECTED_LEGACY + ESCALATED + APPROVED, "utf8"),
};
