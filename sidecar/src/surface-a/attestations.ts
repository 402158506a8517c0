/**
 * What happens to an attestation after `/evaluate`: `POST /verify` (stateless, spec 2.10), `POST /override` (a human
 * resolves a pending decision, spec 2.8) and `POST /confirm-execution` (the Execution Integrity Proof, spec 2.9).
 */
import {
  DEFAULT_TIME_WINDOW_SECONDS,
  IntegrityError,
  confirmExecution,
  confirmationAnswer,
  executedActionOf,
  isTimestamp,
  resolveOverride,
  toEndpointVerification,
  verifyAttestation,
  type ExecutionProof,
} from "@writ/runtime";
import {
  ConfirmExecutionRequest,
  ConfirmExecutionResponse,
  OverrideRequest,
  OverrideResponse,
  VerifyRequest,
  VerifyResponse,
} from "@writ/wire";
import { SidecarHttpError, invalidRequest } from "../http/errors.js";
import { defineRoute } from "../http/route.js";
import { stringMember, trackDecision } from "../observability/request-decision.js";
import type { SurfaceADependencies } from "./dependencies.js";
import { securityEvent } from "../http/security-events.js";

/**
 * The attestation of a request is the caller's: its schema checks only that it is an object, and the runtime checks
 * it as untrusted JSON, whatever its shape.
 */
type Untrusted<T> = Omit<T, "attestation"> & { readonly attestation: Readonly<Record<string, unknown>> };

/** Spec 7: 503 when the signer, the verifier or the replay store is missing. */
function required<T>(value: T | null): T {
  if (value === null) throw SidecarHttpError.of("RUNTIME_NOT_CONFIGURED");
  return value;
}

export const OVERRIDE = defineRoute<SurfaceADependencies, { Body: OverrideRequest }>(
  {
    method: "POST",
    url: "/override",
    scope: "deciding",
    summary: "Resolve a pending decision: a human approves or rejects it",
    tag: "decisions",
    schema: { body: OverrideRequest },
    answers: { 200: { description: "The resolution and its signed record.", schema: OverrideResponse } },
    errors: [
      "PENDING_OVERRIDE_NOT_FOUND",
      "OVERRIDE_ALREADY_RESOLVED",
      "SYS-021",
      "SYS-022",
      "SYS-023",
      "SYS-024",
      "SYS-025",
      "RUNTIME_NOT_CONFIGURED",
      "REPLAY_STORE_UNAVAILABLE",
      "SIGNER_UNAVAILABLE",
    ],
  },
  ({ ctx }) =>
    async (request) => {
      const body = request.body;
      const store = required(ctx.store);
      // INVARIANT (an override is in force only with its record): runtime `resolveOverride` hands the store the audit
      // record with the resolution, and the store commits both together.
      const report = trackDecision(request, { executionId: body.executionId });
      return resolveOverride(body, { store, report, ...(ctx.signer ? { signer: ctx.signer } : {}) });
    },
);

export const CONFIRM_EXECUTION = defineRoute<SurfaceADependencies, { Body: Untrusted<ConfirmExecutionRequest> }>(
  {
    method: "POST",
    url: "/confirm-execution",
    scope: "deciding",
    summary: "Confirm an executed action against its attestation: the signed Execution Integrity Proof",
    description: "Once per executionId. `executedAction.actionTimestamp` must be a date-time that exists, with a time zone.",
    tag: "decisions",
    schema: { body: ConfirmExecutionRequest },
    answers: { 200: { description: "The confirmation and its proof.", schema: ConfirmExecutionResponse } },
    errors: [
      "INTEGRITY_ALREADY_CONFIRMED",
      "INTEGRITY_INVALID_ATTESTATION",
      "RUNTIME_NOT_CONFIGURED",
      "REPLAY_STORE_UNAVAILABLE",
      "SIGNER_UNAVAILABLE",
    ],
  },
  ({ ctx }) =>
    async (request) => {
      const body = request.body;
      const { actionTimestamp } = body.executedAction;
      if (!isTimestamp(actionTimestamp)) {
        throw invalidRequest([
          {
            path: "body/executedAction/actionTimestamp",
            message: "must be an ISO 8601 date-time with a time zone, e.g. 2026-11-22T10:00:00Z",
          },
        ]);
      }
      const signer = required(ctx.signer);
      const verifier = required(ctx.verifier);
      const store = required(ctx.store);
      const executed = executedActionOf(body.executedAction);
      const window = body.timeWindowSeconds ?? DEFAULT_TIME_WINDOW_SECONDS;
      const { attestation } = body;
      const executionId = stringMember(attestation, "executionId");
      const report = trackDecision(request, {
        executionId,
        policyId: stringMember(attestation, "policyId"),
        policyVersion: stringMember(attestation, "policyVersion"),
      });
      let proof: ExecutionProof;
      try {
        // INVARIANT (no confirmation without its record): committed with the write that consumes the confirmation key.
        proof = await confirmExecution(attestation, executed, window, { verifier, signer, store, report });
      } catch (e) {
        // A forged or tampered attestation is a security event here as at `/verify`.
        if (e instanceof IntegrityError && e.code === "INTEGRITY_INVALID_ATTESTATION") {
          ctx.audit.recordSecurityEvent(
            securityEvent(request, "invalid_verification", "attestation presented for confirmation failed verification", executionId),
          );
        }
        throw e;
      }
      return confirmationAnswer(proof);
    },
);

export const VERIFY = defineRoute<SurfaceADependencies, { Body: Readonly<Record<string, unknown>> }>(
  {
    method: "POST",
    url: "/verify",
    scope: "deciding",
    summary: "Verify an attestation, statelessly",
    tag: "decisions",
    schema: { body: VerifyRequest },
    answers: { 200: { description: "`valid` false: the authorized action must not proceed.", schema: VerifyResponse } },
    errors: ["RUNTIME_NOT_CONFIGURED"],
  },
  ({ ctx }) =>
    async (request) => {
      const attestation = request.body;
      const verifier = required(ctx.verifier);
      const verification = verifyAttestation(attestation, verifier);
      const answer = toEndpointVerification(verification);
      const executionId = typeof attestation["executionId"] === "string" ? attestation["executionId"] : null;
      ctx.audit.recordVerification({
        executionId,
        valid: answer.valid,
        checks: answer.checks,
        errors: verification.errors,
        recordedAt: new Date().toISOString(),
      });
      if (!answer.valid) {
        ctx.audit.recordSecurityEvent(
          securityEvent(
            request,
            "invalid_verification",
            `attestation failed verification: ${verification.errors.length} problem(s)`,
            executionId ?? undefined,
          ),
        );
      }
      return answer;
    },
);
