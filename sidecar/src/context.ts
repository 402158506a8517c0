/**
 * Everything a surface serves from, opened once per process: the LMDB environment (replay, audit and Surface B
 * databases side by side, so one flush covers a decision and its audit record), the signer and trust root, the
 * policy registry and the authorizer. Closing it stops timers and flushes and closes LMDB.
 */
import { readFile } from "node:fs/promises";
import { open, type RootDatabase } from "lmdb";
import {
  Authorizer,
  MemoryReplayStore,
  NODE_ED25519,
  PolicyRegistry,
  createSigner,
  createTrustRoot,
  loadPublicKeyPem,
  trustRootFromDocument,
  parseStrictJson,
  type PublicKey,
  type ReplayStore,
  type Signer,
  type SigningKey,
  type TrustRoot,
  type VerifierOptions,
} from "@writ/runtime";
import { LmdbDurability, LmdbReplayStore, type StoreHealth } from "@writ/runtime/lmdb";
import { DisabledAuditLog } from "./audit/disabled-audit-log.js";
import { LmdbAuditLog } from "./audit/lmdb-audit-log.js";
import type { AuditLog } from "./audit/types.js";
import { ConfigError, type SidecarConfig } from "./config.js";
import { loadOrCreateDevApiKey, loadOrCreateSigningKey, parseSigningKey } from "./keys.js";
import { loadSodiumEngine } from "./sodium-engine.js";

export interface SidecarContext {
  readonly config: SidecarConfig;
  readonly apiKey: string;
  /** null: nothing can be signed, and the signing endpoints answer 503 (spec 7). */
  readonly signer: Signer | null;
  /** Spec 2.11 `signing_mode`: where the key came from. */
  readonly signingMode: "env" | "disk";
  /** null: `/verify` answers 503 (no trusted key to verify against). */
  readonly verifier: VerifierOptions | null;
  readonly store: ReplayStore | null;
  readonly registry: PolicyRegistry;
  readonly authorizer: Authorizer;
  readonly audit: AuditLog;
  /** The LMDB environment, when there is a data dir. */
  readonly root: RootDatabase | null;
  /** Whether the data dir takes writes: `store` in `GET /health`; null without a data dir. */
  storeHealth(): StoreHealth | null;
  readonly startedAt: string;
  /** Things worth telling the operator once at start-up (a generated key, a missing signer). */
  readonly notices: readonly string[];
  close(): Promise<void>;
}

/** Expired replay reservations and failed entries are removed this often (they stop blocking at their TTL anyway). */
const SWEEP_INTERVAL_MS = 60_000;
/** While the data dir fails writes (a full disk), a probe write checks this often whether it takes them again. */
const STORE_PROBE_INTERVAL_MS = 1_000;
const LOCAL_TRUST_ROOT_VERSION = "writ-local-1";

async function signingKeyOf(config: SidecarConfig, notices: string[]): Promise<SigningKey | null> {
  if (config.signingKeyPem !== null) return parseSigningKey(config.signingKeyPem, "SERVICE_SIGNING_KEY");
  if (config.signingKeyFile === null) {
    notices.push("no signing key configured (SERVICE_SIGNING_KEY, SERVICE_SIGNING_KEY_FILE or SERVICE_DATA_DIR): signing endpoints answer 503");
    return null;
  }
  const { key, created } = await loadOrCreateSigningKey(config.signingKeyFile);
  if (created) notices.push(`generated a signing key in ${config.signingKeyFile} (key id ${key.keyId})`);
  return key;
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

async function bundleKeys(files: readonly string[]): Promise<PublicKey[]> {
  return Promise.all(
    files.map(async (file) => {
      try {
        return loadPublicKeyPem(await readFile(file, "utf8"));
      } catch (e) {
        throw new ConfigError(`SERVICE_BUNDLE_KEYS: \`${file}\` is not a usable Ed25519 SPKI PEM key: ${(e as Error).message}`);
      }
    }),
  );
}

export interface ContextReporters {
  /** Why `audit_db` turned false. */
  readonly onAuditError?: (error: unknown) => void;
  /** The data dir stopped taking writes (with the error) or takes them again (without). */
  readonly onStoreHealth?: (health: StoreHealth, error?: unknown) => void;
  /** Long work done after start-up (indexing an older audit trail), for the operator's log. */
  readonly onNotice?: (message: string) => void;
}

export async function openContext(config: SidecarConfig, reporters: ContextReporters = {}): Promise<SidecarContext> {
  const onAuditError = reporters.onAuditError ?? (() => undefined);
  const notices: string[] = [];
  let apiKey = config.apiKey;
  if (apiKey === null) {
    if (config.dataDir === null) throw new ConfigError("SERVICE_API_KEY is not set and there is no data dir to keep a generated one in");
    const generated = await loadOrCreateDevApiKey(config.dataDir);
    apiKey = generated.apiKey;
    // Printed once, when generated; afterwards it is only in the file (mode 0600).
    notices.push(generated.created ? `generated an API key, kept in ${generated.path}: ${apiKey}` : `API key read from ${generated.path}`);
  }
  const key = await signingKeyOf(config, notices);
  const trustRoot = await trustRootOf(config, key);
  let signer: Signer | null = null;
  if (key && trustRoot) {
    const sodium = loadSodiumEngine();
    if (sodium.engine === null) notices.push(`libsodium (sodium-native) does not load here, signing with node:crypto: ${sodium.reason}`);
    try {
      signer = createSigner(key, trustRoot, sodium.engine ?? NODE_ED25519);
    } catch (e) {
      throw new ConfigError(`${(e as Error).message}: add the signing key's public half to SERVICE_TRUST_ROOT_FILE`);
    }
  }

  // Room for every named database: replay (1), audit (5), Surface B; lmdb-js allows 12 by default.
  // noSubdir false: the data dir is a directory even when its name has a dot, which lmdb-js would take for a file.
  const root = config.dataDir === null ? null : open({ path: config.dataDir, maxDbs: 32, noSubdir: false });
  // One watcher of write failures for the environment, shared by the replay store, the audit and Surface B.
  const durability = root === null ? null : LmdbDurability.of(root, { onChange: (health, error) => reporters.onStoreHealth?.(health, error) });
  let store: ReplayStore | null = null;
  if (config.replayStore === "lmdb") store = new LmdbReplayStore(root!);
  else if (config.replayStore === "memory") store = new MemoryReplayStore();
  else notices.push("SERVICE_REPLAY_STORE is `none`: every execution fails closed (INV-REPLAY-001)");
  // A decision's audit record is keyed by time; the LMDB replay entry of its fingerprint, durable like the record and
  // written in the same transaction, says when (INVARIANT (a decision's replay entry is created at its issuedAt)).
  // The development memory store forgets at restart, so with it a lookup walks the audit's time index instead.
  const lmdbStore = config.replayStore === "lmdb" ? store : null;
  const decisionInstant = lmdbStore === null ? undefined : async (fingerprint: string) => (await lmdbStore.read(fingerprint))?.createdAt;
  const audit: AuditLog =
    config.audit && root
      ? new LmdbAuditLog(root, {
          onError: onAuditError,
          onNotice: (message) => reporters.onNotice?.(message),
          securityEvents: config.securityEvents,
          retention: config.auditRetention,
          ...(decisionInstant ? { decisionInstant } : {}),
        })
      : new DisabledAuditLog();

  const keys = await bundleKeys(config.bundleKeyFiles);
  const registry = new PolicyRegistry(
    config.policiesRoot,
    { trustedKeys: keys, requireSignature: config.requireSignedBundles },
    { loadTimeoutMs: config.bundleLoadTimeoutMs },
  );
  const authorizer = new Authorizer({
    registry,
    signer,
    store,
    // The audit record of a decision is written from inside the replay store's write that consumes the execution:
    // with both in this LMDB environment it commits and flushes with that entry (one fsync, never one without the
    // other). With the development memory store nothing is durable anyway.
    onDecision: (event) =>
      audit.recordDecision({
        executionId: event.request.executionId,
        endpoint: event.variant,
        status: event.status,
        ruleMatched: event.ruleMatched,
        attestation: event.attestation,
        recordedAt: event.attestation.issuedAt,
        ...(event.request.signalProvenance === undefined ? {} : { signalProvenance: event.request.signalProvenance }),
      }),
  });
  // Runtime manifests are not pinned: after a key rotation, earlier attestations name an earlier manifest, and the
  // trust root alone decides which signers are accepted.
  const verifier: VerifierOptions | null = trustRoot ? { trustRoot } : null;

  const sweep = store ? setInterval(() => void store.sweep().catch(() => undefined), SWEEP_INTERVAL_MS) : null;
  sweep?.unref();
  // Recovery needs no traffic: once space is freed, the probe's write succeeds and `store` in /health is ok again.
  const probe = durability === null ? null : setInterval(() => void durability.probe(), STORE_PROBE_INTERVAL_MS);
  probe?.unref();

  return {
    config,
    apiKey,
    signer,
    signingMode: config.signingKeyPem !== null ? "env" : "disk",
    verifier,
    store,
    registry,
    authorizer,
    audit,
    root,
    storeHealth: () => durability?.health() ?? null,
    startedAt: new Date().toISOString(),
    notices,
    async close() {
      // Bundle loads still under way are abandoned: shutdown never waits on a bundle read.
      registry.close();
      if (sweep) clearInterval(sweep);
      if (probe) clearInterval(probe);
      await audit.close();
      // The replay store does not own a shared root: closing it only stops its use; the root is flushed and closed here.
      await store?.close().catch(() => undefined);
      if (root) {
        // A data dir that cannot flush (full) must not hang the shutdown: what it failed was never acknowledged.
        await durability?.flushed().catch(() => undefined);
        await root.close();
      }
    },
  };
}
