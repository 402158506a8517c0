import { randomUUID } from "node:crypto";
import { canonicalJson } from "../canonical/jcs.js";
import { sha256Hex } from "../canonical/digest.js";
import { OverrideError } from "../errors.js";
import type { OverrideAuditRecord } from "../replay/records.js";
import type { ReplayStore } from "../replay/store.js";
import { endPhase, phaseStart, timedPhase, type DecisionReport } from "../report.js";
import { PAYLOAD_TYPES } from "../signing/payload-types.js";
import { signObjectVerified } from "../signing/sign.js";
import { executionFingerprint, type Attestation } from "./attestation.js";
import type { OverrideRecord, OverrideRequest, OverrideResponse } from "@writ/wire/types";
import type { Signer } from "./trust-root.js";

/** OverrideRequest: spec 2.8, the human decision on a pending decision; OverrideOutcome: its answer. */
export type { OverrideRecord, OverrideRequest, OverrideResponse as OverrideOutcome };

/**
 * What a pending decision keeps in the replay store for its override: the lineage the override is checked against
 * (SYS-022, SYS-023, SYS-025) and the SHA-256 of the JCS form of the signed attestation, which the override record
 * names (`attestationHash`). The attestation itself is the decision's audit record (and its caller's answer): keeping a
 * second copy in every pending entry was most of the replay store's bytes (docs/running-for-years.md). Entries written
 * before hold `attestation` instead of `attestationHash`, and resolve as before.
 */
export interface PendingContext {
  readonly execution_fingerprint: string;
  readonly executionId: string;
  readonly provenance: { readonly bundleHash: string; readonly signerKeyId: string; readonly trustRootVersion: string };
  readonly attestationHash: string;
}

/** A pending context as an earlier release wrote it: the whole attestation in place of its hash. */
interface EarlierPendingContext {
  readonly attestation: Attestation;
}

/**
 * The pending context of `attestation`; `jcsText`, when the caller has it, is the attestation's JCS text (a variant 1
 * attestation's signed text: runtime attest/attestation-text.ts), hashed as it is instead of serialized again.
 */
export function pendingContext(attestation: Attestation, jcsText?: string): PendingContext {
  const p = "provenance" in attestation ? attestation.provenance : attestation;
  return {
    execution_fingerprint: attestation.execution_fingerprint,
    executionId: attestation.executionId,
    provenance: { bundleHash: p.bundleHash, signerKeyId: p.signerKeyId, trustRootVersion: p.trustRootVersion },
    attestationHash: sha256Hex(jcsText ?? canonicalJson(attestation)),
  };
}

export interface OverrideDependencies {
  readonly store: ReplayStore;
  readonly signer?: Signer;
  readonly now?: () => Date;
  /** Where the phases are written: `validate` (the pending decision read and checked), `sign`, `write` (report.ts). */
  readonly report?: DecisionReport;
}

/**
 * Resolves a pending decision once, approved or rejected.
 * INVARIANT (an override resolves a decision once): the store's `resolveOverride` is one conditional write
 * from `pending_override`, so of two racing overrides one wins and the other gets OVERRIDE_ALREADY_RESOLVED.
 * @throws OverrideError SYS-021 no pending decision, SYS-022 / SYS-023 / SYS-025 lineage, SYS-024 store
 *   without override transitions, OVERRIDE_ALREADY_RESOLVED
 */
export async function resolveOverride(request: OverrideRequest, deps: OverrideDependencies): Promise<OverrideResponse> {
  const { store, report } = deps;
  if (typeof store.markPendingOverride !== "function" || typeof store.resolveOverride !== "function") {
    throw new OverrideError("SYS-024", "the replay store does not support override transitions");
  }
  const fingerprint = executionFingerprint(request.executionId);
  const validating = phaseStart(report);
  const entry = await store.read(fingerprint);
  const signing = endPhase(report, "validate", validating);
  if (entry && (entry.state === "consumed" || entry.state === "rejected") && entry.resolution !== undefined) {
    throw new OverrideError("OVERRIDE_ALREADY_RESOLVED", `the decision for \`${request.executionId}\` is already resolved`);
  }
  if (!entry || entry.state !== "pending_override") {
    throw new OverrideError("SYS-021", `no pending decision for \`${request.executionId}\``);
  }
  const context = (entry.context ?? {}) as Partial<PendingContext & EarlierPendingContext>;
  if (typeof context.execution_fingerprint !== "string") {
    throw new OverrideError("SYS-022", "the pending decision has no execution_fingerprint");
  }
  if (context.execution_fingerprint !== fingerprint || context.executionId !== request.executionId) {
    throw new OverrideError("SYS-023", "the pending decision belongs to another execution");
  }
  const attestationHash =
    typeof context.attestationHash === "string"
      ? context.attestationHash
      : context.attestation
        ? sha256Hex(canonicalJson(context.attestation))
        : undefined;
  if (!context.provenance || attestationHash === undefined) {
    throw new OverrideError("SYS-025", "the pending decision has no provenance");
  }
  const body = {
    overrideId: randomUUID(),
    executionId: request.executionId,
    execution_fingerprint: fingerprint,
    approved: request.approved,
    approved_by: request.approvedBy,
    approver_role: request.approverRole,
    reason: request.reason,
    decidedAt: (deps.now ?? (() => new Date()))().toISOString(),
    attestationHash,
  };
  const record: OverrideRecord = deps.signer
    ? { ...body, signature: await signObjectVerified(PAYLOAD_TYPES.override, body, deps.signer.key, deps.signer.engine) }
    : { ...body, digest: sha256Hex(canonicalJson(body)) };
  const writing = endPhase(report, "sign", signing);

  const outcome: OverrideResponse = request.approved
    ? {
        status: "approved",
        overrideId: record.overrideId,
        resolution: { status: "executed", execution_fingerprint: fingerprint, signature: record.signature ?? record.digest ?? "" },
        record,
      }
    : { status: "rejected", executionId: request.executionId, record };
  const audited: OverrideAuditRecord = {
    executionId: request.executionId,
    approved: request.approved,
    approvedBy: request.approvedBy,
    approverRole: request.approverRole,
    reason: request.reason,
    overrideId: record.overrideId,
    record,
    recordedAt: record.decidedAt,
  };
  // INVARIANT (an override is in force only with its record): the audit record is committed with the resolution
  // (INVARIANT (a transition is kept with its record)), so no crash leaves a resolved override without approver and reason.
  const resolving = store.resolveOverride(fingerprint, entry.token, request.approved, {
    resolution: record,
    record: { kind: "override", body: audited },
  });
  const result = await timedPhase(report, "write", writing, resolving);
  if (!result.ok) {
    if (result.reason === "wrong_state")
      throw new OverrideError("OVERRIDE_ALREADY_RESOLVED", `the decision for \`${request.executionId}\` is already resolved`);
    if (result.reason === "token_mismatch") throw new OverrideError("SYS-023", "override lineage token does not match");
    throw new OverrideError("SYS-021", `no pending decision for \`${request.executionId}\``);
  }
  return outcome;
}
