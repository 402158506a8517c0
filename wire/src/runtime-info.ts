/** What Surface A says about itself (spec 2.11; writ's additions: docs/sidecar.md). */
import type { SignedRuntimeManifest } from "./evidence.js";

/** `GET /health`, the one Surface A route without the API key. */
export interface Health {
  readonly status: "ok";
  readonly runtimeVersion: string;
  readonly runtimeHash: string;
  /** `error`: the signing key is misconfigured (spec 7). */
  readonly verification: "ok" | "error";
  /** false: the audit database is off or disconnected, which does not stop execution (spec 7). */
  readonly audit_db: boolean;
  /**
   * writ's addition: whether the store (the data dir, or a fleet's PostgreSQL database: replay store, audit, Surface B)
   * takes writes. `error`: writes fail (a full disk, an unreachable database) and the routes that write answer 503
   * until it takes them again, by itself; `none`: no durable store.
   */
  readonly store: StoreStatus;
  readonly signing_mode: "env" | "disk";
  readonly capabilities: readonly string[];
  readonly supportedSchemaVersions: readonly string[];
}

export interface StoreStatus {
  readonly status: "ok" | "error" | "none";
  /** Why writes fail, when `error`. */
  readonly problem?: string;
  /** ISO 8601: since when, when `error`. */
  readonly since?: string;
}

/** `GET /runtime/manifest`. */
export interface RuntimeManifestResponse {
  readonly version: string;
  readonly runtimeHash: string;
  readonly capabilities: readonly string[];
  readonly supportedSchemaVersions: readonly string[];
  readonly startedAt: string;
  /** writ's additions, present when the service has a signing key: what attestations name as `provenance.manifestHash`. */
  readonly manifestHash?: string;
  readonly signedManifest?: SignedRuntimeManifest;
}

/** `GET /runtime/capabilities`. */
export interface Capabilities {
  readonly capabilities: readonly string[];
}
