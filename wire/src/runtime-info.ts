/** What Surface A says about itself (spec 2.11; writ's additions: docs/sidecar.md). */
import { Type } from "typebox";
import { SignedRuntimeManifest } from "./evidence.js";
import { Choice, Closed, Instant, List, type Static } from "./schema.js";

export const StoreStatus = Closed(
  {
    status: Choice(["ok", "error", "none"]),
    problem: Type.Optional(Type.String({ description: "Why writes fail, when `error`." })),
    since: Type.Optional(Type.String({ description: "ISO 8601: since when, when `error`." })),
  },
  {
    title: "StoreStatus",
    description:
      "Whether the store (the data dir, or a fleet's PostgreSQL database: replay store, audit, Surface B) takes writes. `error`: writes fail (a full disk, an unreachable database) and the routes that write answer 503 until it takes them again, by itself; `none`: no durable store.",
  },
);
export type StoreStatus = Static<typeof StoreStatus>;

/** A remote bundle source, as `/health` reports it (never its URL: a signed URL is a secret). */
export const RemoteSourceStatus = Closed(
  {
    reached: Type.Boolean({ description: "This process has had an answer from the source (200 or 304)." }),
    serial: Type.Union([Type.Integer(), Type.Null()], { description: "The serial of the set served; null when none is." }),
    lastSuccessAt: Type.Union([Instant(), Type.Null()], { description: "The last poll that reached the source." }),
    lastError: Type.Union([Type.String(), Type.Null()], {
      description: "Why the last poll failed, or why the index the source serves now was refused; null otherwise.",
    }),
    failures: Type.Integer({ minimum: 0, description: "Polls failed in a row." }),
  },
  { title: "RemoteSourceStatus", description: "A remote bundle source (never its URL: a signed URL is a secret)." },
);
export type RemoteSourceStatus = Static<typeof RemoteSourceStatus>;

/** What `/health` says of the policy bundles. */
export const BundlesHealth = Closed(
  {
    ready: Type.Boolean(),
    source: Choice(["directory", "remote"], {
      description: "`directory`: the policies root (bundle directories and archives); `remote`: a remote bundle source.",
    }),
    served: Type.Integer({ minimum: 0, description: "How many bundles are served now." }),
    conflicts: Type.Integer({
      minimum: 0,
      description: "Bundles refused since start because their version was served with other bytes; details on `GET /admin/bundles`.",
    }),
    problem: Type.Optional(Type.String({ description: "Why nothing can be served, when `ready` is false." })),
    remote: Type.Optional(RemoteSourceStatus),
  },
  { title: "BundlesHealth", description: "What `/health` says of the policy bundles." },
);
export type BundlesHealth = Static<typeof BundlesHealth>;

/** `GET /health`, the one Surface A route without the API key. */
export const Health = Closed(
  {
    status: Type.Literal("ok"),
    runtimeVersion: Type.String(),
    runtimeHash: Type.String(),
    verification: Choice(["ok", "error"], { description: "`error`: the signing key is misconfigured." }),
    audit_db: Type.Boolean({ description: "false: the audit database is off or disconnected, which does not stop execution." }),
    store: StoreStatus,
    signing_mode: Choice(["env", "disk"]),
    capabilities: List(Type.String()),
    supportedSchemaVersions: List(Type.String()),
    ready: Type.Boolean({
      description:
        "Readiness (docs/bundles.md): whether the sidecar can decide: a bundle is served (`bundles.ready`) and the store takes writes (`store.status` is not `error`); when false, those fields say why. `GET /health?probe=ready` answers 503 while this is false; `GET /health` alone (liveness) answers 200 whatever it says.",
    }),
    bundles: BundlesHealth,
    instanceId: Type.Union([Type.String(), Type.Null()], {
      description:
        'This sidecar instance\'s id, the `logId` of its tamper-evident audit record log (docs/audit.md, "Tamper evidence"); null when it keeps none.',
    }),
    event_loop_lag_ms: Type.Integer({
      minimum: 0,
      description:
        'The largest event-loop delay of the last 5 seconds (the current second and the four before), in milliseconds: how long a request arriving then waited before any of its code ran. A stall shows here once it ends, before a probe times out (docs/sidecar.md, "Event-loop delay").',
    }),
  },
  { title: "Health", description: "Liveness and readiness of Surface A." },
);
export type Health = Static<typeof Health>;

/** `GET /health` query parameters: `?probe=ready` asks for readiness. */
export const HealthQuery = Closed({ probe: Type.Optional(Choice(["ready"])) });
export type HealthQuery = Static<typeof HealthQuery>;

/** A bundle served. */
export const ServedBundleInfo = Closed(
  {
    policyId: Type.String(),
    version: Type.String(),
    bundleHash: Type.String(),
    signedBy: Type.Union([Type.String(), Type.Null()], {
      description: "keyId of the bundle key its signature verified with; null when unsigned.",
    }),
  },
  { title: "ServedBundleInfo", description: "A bundle served." },
);
export type ServedBundleInfo = Static<typeof ServedBundleInfo>;

/** A version conflict refused (a version is immutable: docs/bundles.md). */
export const VersionConflictInfo = Closed(
  {
    policyId: Type.String(),
    version: Type.String(),
    servedHash: Type.String({ description: "The `bundle_hash` served, and still served." }),
    refusedHash: Type.String(),
    origin: Type.String({ description: "Where the refused bundle came from." }),
    at: Type.String(),
  },
  { title: "VersionConflictInfo", description: "A version conflict refused (a version is immutable: docs/bundles.md)." },
);
export type VersionConflictInfo = Static<typeof VersionConflictInfo>;

/** `GET /admin/bundles`. */
export const BundlesDetail = Closed(
  {
    ...BundlesHealth.properties,
    bundles: List(ServedBundleInfo),
    aliases: List(Closed({ policyId: Type.String(), alias: Type.String(), version: Type.String() })),
    recentConflicts: List(VersionConflictInfo),
  },
  { title: "BundlesDetail", description: "The bundles served, their aliases, and the version conflicts refused." },
);
export type BundlesDetail = Static<typeof BundlesDetail>;

const reloadMembers = {
  ok: Type.Boolean(),
  served: Type.Integer({ minimum: 0, description: "How many bundles are served after the reload (as before when it failed)." }),
  refused: List(Closed({ bundle: Type.String(), code: Type.String(), message: Type.String() }), {
    description: "Why it failed: each bundle refused, or the one reason that stopped it.",
  }),
  poll: Type.Optional(
    Closed(
      { result: Choice(["installed", "unchanged", "refused", "unreachable"]), message: Type.Optional(Type.String()) },
      { description: "With a remote source: the poll made after the keys were read again." },
    ),
  ),
};

/** `POST /admin/reload` answered 200 (`ok`), or 409 `reload refused` with the same members. */
export const ReloadResponse = Closed(reloadMembers, { title: "ReloadResponse", description: "The outcome of a reload." });
export type ReloadResponse = Static<typeof ReloadResponse>;

/** The 409 of `POST /admin/reload`: `{error: "reload refused: nothing changed"}` with the reload's members. */
export const ReloadRefusedBody = Closed(
  { error: Type.Literal("reload refused: nothing changed"), ...reloadMembers },
  { title: "ReloadRefusedBody", description: "A refused reload: nothing changed." },
);
export type ReloadRefusedBody = Static<typeof ReloadRefusedBody>;

/** `GET /runtime/manifest`. */
export const RuntimeManifestResponse = Closed(
  {
    version: Type.String(),
    runtimeHash: Type.String(),
    capabilities: List(Type.String()),
    supportedSchemaVersions: List(Type.String()),
    startedAt: Instant(),
    manifestHash: Type.Optional(
      Type.String({
        description: "writ's addition, present when the service has a signing key: what attestations name as `provenance.manifestHash`.",
      }),
    ),
    signedManifest: Type.Optional(SignedRuntimeManifest),
  },
  { title: "RuntimeManifestResponse", description: "The runtime's version, hash and capabilities." },
);
export type RuntimeManifestResponse = Static<typeof RuntimeManifestResponse>;

/** `GET /runtime/capabilities`. */
export const Capabilities = Closed({ capabilities: List(Type.String()) }, { title: "Capabilities" });
export type Capabilities = Static<typeof Capabilities>;
