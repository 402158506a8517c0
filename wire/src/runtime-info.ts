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
  /**
   * writ's addition (readiness, docs/bundles.md): whether a bundle is served. `GET /health?probe=ready` answers 503
   * while this is false; `GET /health` alone (liveness) answers 200 whatever it says.
   */
  readonly ready: boolean;
  readonly bundles: BundlesHealth;
  /**
   * writ's addition: this sidecar instance's id, the `logId` of its tamper-evident audit record log (docs/audit.md,
   * "Tamper evidence"); null when it keeps none.
   */
  readonly instanceId: string | null;
}

/** What `/health` says of the policy bundles. */
export interface BundlesHealth {
  readonly ready: boolean;
  /** `directory`: the policies root (bundle directories and archives); `remote`: a remote bundle source. */
  readonly source: "directory" | "remote";
  /** How many bundles are served now. */
  readonly served: number;
  /** Bundles refused since start because their version was served with other bytes; details on `GET /admin/bundles`. */
  readonly conflicts: number;
  /** Why nothing can be served, when `ready` is false. */
  readonly problem?: string;
  readonly remote?: RemoteSourceStatus;
}

/** A remote bundle source, as `/health` reports it (never its URL: a signed URL is a secret). */
export interface RemoteSourceStatus {
  /** This process has had an answer from the source (200 or 304). */
  readonly reached: boolean;
  /** The serial of the set served; null when none is. */
  readonly serial: number | null;
  /** ISO 8601: the last poll that reached the source. */
  readonly lastSuccessAt: string | null;
  /** Why the last poll failed, or why the index the source serves now was refused; null otherwise. */
  readonly lastError: string | null;
  /** Polls failed in a row. */
  readonly failures: number;
}

/** A bundle served. */
export interface ServedBundleInfo {
  readonly policyId: string;
  readonly version: string;
  readonly bundleHash: string;
  /** keyId of the bundle key its signature verified with; null when unsigned. */
  readonly signedBy: string | null;
}

/** A version conflict refused (a version is immutable: docs/bundles.md). */
export interface VersionConflictInfo {
  readonly policyId: string;
  readonly version: string;
  /** The `bundle_hash` served, and still served. */
  readonly servedHash: string;
  readonly refusedHash: string;
  /** Where the refused bundle came from. */
  readonly origin: string;
  readonly at: string;
}

/** `GET /admin/bundles`. */
export interface BundlesDetail extends BundlesHealth {
  readonly bundles: readonly ServedBundleInfo[];
  readonly aliases: readonly { readonly policyId: string; readonly alias: string; readonly version: string }[];
  readonly recentConflicts: readonly VersionConflictInfo[];
}

/** `POST /admin/reload` answered 200 (`ok`), or 409 `reload refused` with the same members. */
export interface ReloadResponse {
  readonly ok: boolean;
  /** How many bundles are served after the reload (as before when it failed). */
  readonly served: number;
  /** Why it failed: each bundle refused, or the one reason that stopped it. */
  readonly refused: readonly { readonly bundle: string; readonly code: string; readonly message: string }[];
  /** With a remote source: the poll made after the keys were read again. */
  readonly poll?: { readonly result: "installed" | "unchanged" | "refused" | "unreachable"; readonly message?: string };
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
