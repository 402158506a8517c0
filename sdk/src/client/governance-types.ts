/**
 * Surface A shapes outside the workflow (workflow.ts): the legacy single-step execute (spec 2.5) and what the
 * runtime says about itself (spec 2.11; writ's additions: docs/sidecar.md).
 */
import type { AttestationV2, ExecutionState, RuntimeManifest } from "@writ/runtime";
import type { Signals } from "../workflow.js";

/** Legacy `POST /execute`: all four members required. */
export interface ExecuteRequest {
  readonly executionId: string;
  readonly policyId: string;
  readonly policyVersion: string;
  readonly signals: Signals;
  readonly signalProvenance?: Readonly<Record<string, unknown>>;
}

/** Spec 2.5: `status` is `approved`, or else the attestation's `execution_state` (`completed` for a rejection). */
export interface ExecuteResponse {
  readonly status: "approved" | ExecutionState;
  readonly requires_override: boolean;
  readonly attestation: AttestationV2;
}

/** `GET /health`, the one route without the API key. */
export interface Health {
  readonly status: "ok";
  readonly runtimeVersion: string;
  readonly runtimeHash: string;
  /** `error`: the signing key is misconfigured (spec 7). */
  readonly verification: "ok" | "error";
  /** false: the audit database is off or disconnected, which does not stop execution (spec 7). */
  readonly audit_db: boolean;
  readonly signing_mode: "env" | "disk";
  readonly capabilities: readonly string[];
  readonly supportedSchemaVersions: readonly string[];
}

/** `GET /runtime/manifest`. */
export interface RuntimeManifestResponse {
  readonly version: string;
  readonly runtimeHash: string;
  readonly capabilities: readonly string[];
  readonly supportedSchemaVersions: readonly string[];
  readonly startedAt: string;
  /** writ's additions, present when the sidecar has a signing key: what attestations name as `provenance.manifestHash`. */
  readonly manifestHash?: string;
  readonly signedManifest?: RuntimeManifest;
}

/** `GET /runtime/capabilities`. */
export interface Capabilities {
  readonly capabilities: readonly string[];
}
