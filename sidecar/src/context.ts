/**
 * Everything a surface serves from, opened once per process: the storage backend (replay, audit and Surface B, on LMDB
 * or PostgreSQL: storage/), the signer and trust root, the policy registry and the authorizer, the root logger and,
 * when configured, the tracer. Closing it stops timers, closes the backend once its writes are durable, then exports
 * the spans still queued.
 */
import { readFile } from "node:fs/promises";
import type { PolicyRegistry } from "@writ/runtime";
import {
  Authorizer,
  NODE_ED25519,
  createSigner,
  createTrustRoot,
  trustRootFromDocument,
  parseStrictJson,
  type Ed25519Engine,
  type ReplayStore,
  type Signer,
  type SigningKey,
  type TrustRoot,
  type VerifierOptions,
} from "@writ/runtime";
import type { AuditLog } from "./audit/types.js";
import { ConfigError, type ApiKeys, type SidecarConfig } from "./config.js";
import { loadOrCreateDevApiKey, loadOrCreateSigningKey, parseSigningKey } from "./keys.js";
import { readBundleKeys } from "./bundles/bundle-keys.js";
import { PolicyBundles } from "./bundles/policy-bundles.js";
import { createLogger, lifecycleLog, type Logger } from "./observability/logger.js";
import { startTracing, type Tracing } from "./observability/tracing.js";
import { SigningPool } from "./signing/pool.js";
import { loadSodiumEngine } from "./sodium-engine.js";
import { storageWhat } from "./storage/storage-config.js";
import type { ScrapedSeries } from "./observability/series.js";
import type { BackendReporters, StoreHealth } from "./storage/backend.js";
import { engineSeries, openBackend } from "./storage/registry.js";
import type { TrustRecordStore } from "./trust-records/record-store.js";

export interface SidecarContext {
  readonly config: SidecarConfig;
  /** The configured Bearer keys, or in development mode with none configured, the generated single key. */
  readonly apiKeys: ApiKeys;
  /** null: nothing can be signed, and the signing endpoints answer 503 (spec 7). */
  readonly signer: Signer | null;
  /** Spec 2.11 `signing_mode`: where the key came from. */
  readonly signingMode: "env" | "disk";
  /** null: `/verify` answers 503 (no trusted key to verify against). */
  readonly verifier: VerifierOptions | null;
  readonly store: ReplayStore | null;
  readonly registry: PolicyRegistry;
  /** Where the bundles come from, readiness and reload (bundles/policy-bundles.ts). */
  readonly bundles: PolicyBundles;
  readonly authorizer: Authorizer;
  readonly audit: AuditLog;
  /** Surface B's records; null: its record routes answer 503. */
  readonly trustRecords: TrustRecordStore | null;
  /** Whether the store takes writes: `store` in `GET /health`; null without a durable store. */
  storeHealth(): StoreHealth | null;
  /** The storage engine's own series of `/metrics` (its engine.ts `metrics`: LMDB's data file, PostgreSQL's pools). */
  readonly storeSeries: readonly ScrapedSeries[];
  /** The longest a request that writes to the store waits for its answer (StorageBackend `answerWithinMs`). */
  readonly storeAnswerWithinMs: number | null;
  readonly startedAt: string;
  /** Things worth telling the operator once at start-up (a generated signing key, a missing signer). */
  readonly notices: readonly string[];
  /** The API key generated at this start (development mode), to be shown this once; null otherwise. */
  readonly generatedApiKey: { readonly key: string; readonly path: string } | null;
  /** The process's root logger: every line of the sidecar goes through it. */
  readonly log: Logger;
  /** null: tracing is off (docs/sidecar.md, "Traces"). */
  readonly tracing: Tracing | null;
  /** The threads that sign and self-verify (SERVICE_SIGNING_THREADS); null: signing runs on the event loop. */
  readonly signingPool: SigningPool | null;
  close(): Promise<void>;
}

export interface ContextOptions {
  /** The root logger; by default one on stdout at SERVICE_LOG_LEVEL. */
  readonly log?: Logger;
  /** The signing threads' script (signing/pool.ts SIGNING_THREAD_SCRIPT; a test's crashes on cue). */
  readonly signingThreadScript?: URL;
}

const LOCAL_TRUST_ROOT_VERSION = "writ-local-1";

async function signingKeyOf(config: SidecarConfig, notices: string[]): Promise<SigningKey | null> {
  if (config.signingKeyPem !== null) return parseSigningKey(config.signingKeyPem, "SERVICE_SIGNING_KEY");
  if (config.signingKeyFile === null) {
    notices.push(
      "no signing key configured (SERVICE_SIGNING_KEY, SERVICE_SIGNING_KEY_FILE or SERVICE_DATA_DIR): signing endpoints answer 503",
    );
    return null;
  }
  const { key, created } = await loadOrCreateSigningKey(config.signingKeyFile);
  if (created) notices.push(`generated a signing key in ${config.signingKeyFile} (key id ${key.keyId})`);
  return key;
}

/**
 * libsodium where it loads (docs/sidecar.md, "Signing"), else node:crypto, said once: it signs and verifies per request.
 * With SERVICE_SIGNING_THREADS above 0, libsodium signs and self-verifies on that many threads (the pool), `key` given
 * to each at its start; the pool is returned to be closed with the context.
 */
async function ed25519Engine(
  config: SidecarConfig,
  key: SigningKey | null,
  notices: string[],
  log: Logger,
  script: URL | undefined,
): Promise<{ engine: Ed25519Engine; pool: SigningPool | null }> {
  const sodium = loadSodiumEngine();
  if (sodium.engine === null) {
    const threads = config.signingThreads > 0 ? ` (SERVICE_SIGNING_THREADS needs it: libuv's thread pool signs)` : "";
    notices.push(`libsodium (sodium-native) does not load here, signing and verifying with node:crypto${threads}: ${sodium.reason}`);
    return { engine: NODE_ED25519, pool: null };
  }
  if (config.signingThreads === 0 || key === null) return { engine: sodium.engine, pool: null };
  const pool = await SigningPool.start({
    threads: config.signingThreads,
    inline: sodium.engine,
    keys: [key],
    onThreadStopped: (message) => log.error(message),
    ...(script === undefined ? {} : { script }),
  }).catch((e: unknown) => {
    throw new ConfigError(`SERVICE_SIGNING_THREADS=${config.signingThreads}: ${(e as Error).message} (0 signs on the event loop)`);
  });
  notices.push(
    `signing and self-verifying on ${config.signingThreads} thread${config.signingThreads === 1 ? "" : "s"} (SERVICE_SIGNING_THREADS)`,
  );
  return { engine: pool, pool };
}

async function trustRootOf(config: SidecarConfig, key: SigningKey | null): Promise<TrustRoot | null> {
  if (config.trustRootFile === null) return key ? createTrustRoot(LOCAL_TRUST_ROOT_VERSION, [key.publicKey]) : null;
  let text: string;
  try {
    text = await readFile(config.trustRootFile, "utf8");
  } catch (e) {
    throw new ConfigError(`cannot read SERVICE_TRUST_ROOT_FILE \`${config.trustRootFile}\`: ${(e as Error).message}`);
  }
  try {
    return trustRootFromDocument(parseStrictJson(text));
  } catch (e) {
    throw new ConfigError(`SERVICE_TRUST_ROOT_FILE \`${config.trustRootFile}\` is not a trust root document: ${(e as Error).message}`);
  }
}

/** What the storage backend tells the operator, on the root logger. */
function backendReporters(config: SidecarConfig, log: Logger): BackendReporters {
  const store = storageWhat(config.storage);
  return {
    onAuditError: (error) => log.error({ err: error }, "audit failure: audit_db is false until audit writes succeed again"),
    onStoreHealth: (health: StoreHealth) =>
      health.ok
        ? log.warn(`${store} takes writes again`)
        : log.error({ problem: health.problem }, `${store} failing writes: answering 503 until it takes them again`),
    onNotice: (message) => lifecycleLog(log).info(message),
    onWarning: (message) => log.warn(message),
  };
}

export async function openContext(config: SidecarConfig, options: ContextOptions = {}): Promise<SidecarContext> {
  const log = options.log ?? createLogger(config.logLevel);
  const notices: string[] = [];
  let apiKeys = config.apiKeys;
  let generatedApiKey: SidecarContext["generatedApiKey"] = null;
  if (apiKeys.all === null && apiKeys.deciding === null && apiKeys.reading === null) {
    if (config.dataDir === null) throw new ConfigError("SERVICE_API_KEY is not set and there is no data dir to keep a generated one in");
    const generated = await loadOrCreateDevApiKey(config.dataDir);
    apiKeys = { ...apiKeys, all: generated.apiKey };
    // Shown once, when generated; afterwards it is only in the file (mode 0600).
    if (generated.created) generatedApiKey = { key: generated.apiKey, path: generated.path };
    else notices.push(`API key read from ${generated.path}`);
  }
  const key = await signingKeyOf(config, notices);
  const trustRoot = await trustRootOf(config, key);
  const bundleKeys = await readBundleKeys(config.bundleKeyFiles);
  // The signing threads start here, closed if anything below fails.
  const { engine, pool: signingPool } =
    trustRoot === null ? { engine: NODE_ED25519, pool: null } : await ed25519Engine(config, key, notices, log, options.signingThreadScript);
  let signer: Signer | null = null;
  if (key && trustRoot) {
    try {
      signer = createSigner(key, trustRoot, engine);
    } catch (e) {
      await signingPool?.close();
      throw new ConfigError(`${(e as Error).message}: add the signing key's public half to SERVICE_TRUST_ROOT_FILE`);
    }
  }

  let tracing: Tracing | null;
  try {
    tracing = config.tracing === null ? null : await startTracing(config.tracing, log);
  } catch (error) {
    await signingPool?.close();
    throw error;
  }
  if (config.tracing !== null)
    notices.push(`tracing: spans are exported over OTLP (${config.tracing.protocol}) to ${new URL(config.tracing.url).origin}`);
  // Opened last: nothing above may fail after a database connection or an LMDB environment is open.
  let backend;
  try {
    backend = await openBackend(config, backendReporters(config, log), notices, signer);
  } catch (error) {
    await tracing?.shutdown();
    await signingPool?.close();
    throw error;
  }
  // Development mode pins in memory: an author recompiling a version in place is not locked out by yesterday's pin.
  const bundles = PolicyBundles.create(
    config,
    bundleKeys,
    config.dev ? null : backend.bundlePins,
    lifecycleLog(log).child({ component: "bundle-source" }),
  );
  const registry = bundles.registry;
  // The preflight: every bundle configured is loaded and verified before the surfaces listen.
  try {
    await bundles.start(notices);
  } catch (error) {
    await bundles.close();
    await backend.close();
    await tracing?.shutdown();
    await signingPool?.close();
    throw error;
  }
  const { replay: store, audit } = backend;
  const authorizer = new Authorizer({ registry, signer, store });
  // Runtime manifests are not pinned: after a key rotation, earlier attestations name an earlier manifest, and the
  // trust root alone decides which signers are accepted.
  const verifier: VerifierOptions | null = trustRoot ? { trustRoot, engine } : null;

  return {
    config,
    apiKeys,
    signer,
    signingMode: config.signingKeyPem !== null ? "env" : "disk",
    verifier,
    store,
    registry,
    bundles,
    authorizer,
    audit,
    trustRecords: backend.trustRecords,
    storeHealth: () => backend.health(),
    storeSeries: engineSeries(config.storage.kind, backend),
    storeAnswerWithinMs: backend.answerWithinMs,
    startedAt: new Date().toISOString(),
    notices,
    generatedApiKey,
    log,
    tracing,
    signingPool,
    async close() {
      // Bundle loads still under way are abandoned and the source stops polling: shutdown never waits on a bundle read.
      await bundles.close();
      // After the store: whatever it still writes was signed before the surfaces drained.
      await backend.close();
      await tracing?.shutdown();
      await signingPool?.close();
    },
  };
}
