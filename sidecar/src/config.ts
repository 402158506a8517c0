/**
 * The sidecar's configuration, read from the environment (docs/sidecar.md; docs/sidecar.md lists every
 * setting). Every bad value is a start-up error naming the variable and what it accepts: a signing service must not
 * start on a guess.
 */
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { DEFAULT_BUNDLE_LOAD_TIMEOUT_MS, LOG_ID_PATTERN } from "@writ/runtime";
import { DAY_MS, DEFAULT_AUDIT_RETENTION, type RetentionLimit } from "./audit/retention.js";
import { DEFAULT_CHECKPOINTS } from "./audit/record-log/checkpointer.js";
import { DEFAULT_SECURITY_EVENT_LIMITS } from "./audit/security-event-limiter.js";
import type { BundleSettings } from "./bundles/policy-bundles.js";
import { DEFAULT_BUNDLE_SOURCE, type BundleSourceConfig } from "./bundles/remote-source.js";
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from "./http/connections.js";
import type { ApiKeys } from "./http/scopes.js";
import { assertOwnerOnly, ConfigError, flag, integer, oneOf, path, text, type Env } from "./env.js";
import { LOG_LEVELS, type LogLevel } from "./observability/logger.js";
import { DEFAULT_OTLP_TRACES_URL, TRACE_SAMPLERS, type TracingConfig } from "./observability/tracing.js";
import { signingThreads } from "./signing/settings.js";
import { usableCores } from "./signing/usable-cores.js";
import { DEFAULT_MAINTENANCE_INTERVALS, type BackendSettings } from "./storage/backend.js";
import { auditRefusal, processesRefusal, storageConfig, type StorageConfig } from "./storage/storage-config.js";
import { PROCESSES_VARIABLE, coresPerProcess, processCount, processIndex } from "./processes/settings.js";

export { ConfigError, type ApiKeys, type Env, type LogLevel, type TracingConfig };

export interface SidecarConfig extends BundleSettings, BackendSettings {
  /** The Bearer keys of both surfaces; all null only in development mode, before the single key is generated. */
  readonly apiKeys: ApiKeys;
  /** PEM PKCS8 key from `SERVICE_SIGNING_KEY` (signing_mode `env`), else the key file (signing_mode `disk`). */
  readonly signingKeyPem: string | null;
  readonly signingKeyFile: string | null;
  /** Where replay, audit and Surface B live (SERVICE_STORE): `lmdb` (embedded, the data dir) or `postgres` (a fleet's). */
  readonly storage: StorageConfig;
  readonly host: string;
  /** null: the surface is off. */
  readonly portA: number | null;
  readonly portB: number | null;
  /** A trust root document (`{trustRootVersion, keys: [PEM…]}`) of earlier keys still accepted by `/verify`. */
  readonly trustRootFile: string | null;
  readonly logLevel: LogLevel;
  /** One log line per request answered (`SERVICE_ACCESS_LOG=on`), at info. */
  readonly accessLog: boolean;
  /** null: no spans are made (the default: OTEL_TRACES_EXPORTER is not `otlp`). */
  readonly tracing: TracingConfig | null;
  /** How long graceful shutdown waits for requests in flight before closing anyway. */
  readonly shutdownTimeoutMs: number;
  /** Development mode (`--dev`, `npm start`): generates and keeps the API key and signing key in the data dir. */
  readonly dev: boolean;
  /** Timeouts and the socket cap of each surface (docs/sidecar.md, "Connection limits"). */
  readonly connections: ConnectionLimits;
  /**
   * `SERVICE_SIGNING_THREADS`: threads that sign and self-verify (signing/settings.ts); 0: on the event loop. By
   * default from the cores the process may use (docs/sidecar.md, "Signing threads").
   */
  readonly signingThreads: number;
}

const DEFAULT_DEV_DATA_DIR = ".writ/data";
/** Shortest API key accepted: 128 bits of base64 or hex is at least 22 characters. */
export const MIN_API_KEY_LENGTH = 16;
/** What a Bearer credential can hold (RFC 6750 `b64token`): a key with any other character can never be sent. */
export const API_KEY_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/;

function instanceId(env: Env): string | null {
  const value = text(env, "SERVICE_INSTANCE_ID");
  if (value === undefined) return null;
  if (!LOG_ID_PATTERN.test(value)) throw new ConfigError(`SERVICE_INSTANCE_ID must be 1 to 128 of A-Z a-z 0-9 . _ : -, not \`${value}\``);
  return value;
}

/** SERVICE_PROCESSES, refused above 1 on an engine whose store one process keeps, and in development mode. */
function processesOf(env: Env, storage: StorageConfig, dev: boolean): SidecarConfig["processes"] {
  const count = processCount(env);
  const refusal = dev ? "development mode (--dev) runs one process, which makes its keys" : processesRefusal(storage);
  if (count > 1 && refusal !== null) throw new ConfigError(`${PROCESSES_VARIABLE} is ${count}, but ${refusal}`);
  return { count, index: processIndex(env, count) };
}

function port(env: Env, name: string, fallback: number): number | null {
  const value = text(env, name);
  if (value === undefined) return fallback;
  if (value === "off") return null;
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) {
    throw new ConfigError(`${name} must be a port number from 0 to 65535 or \`off\`, not \`${value}\``);
  }
  return Number(value);
}

/** A positive integer, or `off` for no limit (null). */
function limitOrOff(env: Env, name: string, fallback: number | null, max: number): number | null {
  const value = text(env, name);
  if (value === undefined) return fallback;
  if (value === "off") return null;
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new ConfigError(`${name} must be an integer from 1 to ${max} or \`off\`, not \`${value}\``);
  }
  return Number(value);
}

function retentionLimit(env: Env, prefix: string, fallback: RetentionLimit): RetentionLimit {
  const days = limitOrOff(env, `${prefix}_RETENTION_DAYS`, fallback.maxAgeMs === null ? null : fallback.maxAgeMs / DAY_MS, 36_500);
  return {
    maxAgeMs: days === null ? null : days * DAY_MS,
    maxRecords: limitOrOff(env, `${prefix}_MAX_RECORDS`, fallback.maxRecords, 1_000_000_000),
  };
}

function auditBounds(env: Env): Pick<SidecarConfig, "securityEvents" | "auditRetention"> {
  return {
    securityEvents: {
      intervalMs: integer(env, "SERVICE_AUDIT_SECURITY_INTERVAL_S", DEFAULT_SECURITY_EVENT_LIMITS.intervalMs / 1_000, 1, 86_400) * 1_000,
      maxSources: integer(env, "SERVICE_AUDIT_SECURITY_MAX_SOURCES", DEFAULT_SECURITY_EVENT_LIMITS.maxSources, 1, 1_000_000),
    },
    auditRetention: {
      decisions: retentionLimit(env, "SERVICE_AUDIT_DECISIONS", DEFAULT_AUDIT_RETENTION.decisions),
      verifications: retentionLimit(env, "SERVICE_AUDIT_VERIFICATIONS", DEFAULT_AUDIT_RETENTION.verifications),
      security: retentionLimit(env, "SERVICE_AUDIT_SECURITY", DEFAULT_AUDIT_RETENTION.security),
    },
  };
}

function bundleSourceConfig(env: Env, cwd: string, dataDir: string | null, bundleKeyFiles: readonly string[]): BundleSourceConfig | null {
  const raw = text(env, "SERVICE_BUNDLE_SOURCE_URL");
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError("SERVICE_BUNDLE_SOURCE_URL is not a URL (expected https://host/path/ of a bundle source's index.json)");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new ConfigError(`SERVICE_BUNDLE_SOURCE_URL must be an http:// or https:// URL, not ${url.protocol}//…`);
  if (env["SERVICE_POLICIES_ROOT"] !== undefined)
    throw new ConfigError("SERVICE_BUNDLE_SOURCE_URL and SERVICE_POLICIES_ROOT are both set; bundles come from one of them");
  if (bundleKeyFiles.length === 0)
    throw new ConfigError(
      "SERVICE_BUNDLE_SOURCE_URL is set but SERVICE_BUNDLE_KEYS names no key: a remote source's index and bundles must be signed",
    );
  if (!url.pathname.endsWith("/")) url.pathname += "/";
  const cacheDir = path(text(env, "SERVICE_BUNDLE_CACHE_DIR"), cwd) ?? (dataDir === null ? null : resolve(dataDir, "bundle-source"));
  if (cacheDir === null)
    throw new ConfigError(
      "SERVICE_BUNDLE_SOURCE_URL needs SERVICE_BUNDLE_CACHE_DIR or SERVICE_DATA_DIR: the last good set is kept on disk",
    );
  return {
    url: url.href,
    pollIntervalMs: integer(env, "SERVICE_BUNDLE_POLL_INTERVAL_MS", DEFAULT_BUNDLE_SOURCE.pollIntervalMs, 100, 86_400_000),
    fetchTimeoutMs: integer(env, "SERVICE_BUNDLE_FETCH_TIMEOUT_MS", DEFAULT_BUNDLE_SOURCE.fetchTimeoutMs, 100, 600_000),
    cacheDir,
  };
}

/** The policies root must be a directory: a typo would otherwise start a sidecar that answers 404 for every policy. */
function checkPoliciesRoot(root: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(root).isDirectory();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError(
      `SERVICE_POLICIES_ROOT \`${root}\` ${code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? (e as Error).message})`}`,
    );
  }
  if (!isDirectory) throw new ConfigError(`SERVICE_POLICIES_ROOT \`${root}\` is not a directory`);
}

function connectionLimits(env: Env): ConnectionLimits {
  const d = DEFAULT_CONNECTION_LIMITS;
  const limits: ConnectionLimits = {
    headersTimeoutMs: integer(env, "SERVICE_HEADERS_TIMEOUT_MS", d.headersTimeoutMs, 100, 600_000),
    requestTimeoutMs: integer(env, "SERVICE_REQUEST_TIMEOUT_MS", d.requestTimeoutMs, 100, 3_600_000),
    keepAliveTimeoutMs: integer(env, "SERVICE_KEEP_ALIVE_TIMEOUT_MS", d.keepAliveTimeoutMs, 100, 3_600_000),
    idleTimeoutMs: integer(env, "SERVICE_IDLE_TIMEOUT_MS", d.idleTimeoutMs, 100, 3_600_000),
    maxSockets: integer(env, "SERVICE_MAX_SOCKETS", d.maxSockets, 16, 1_000_000),
  };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError(
      `SERVICE_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed SERVICE_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs})`,
    );
  }
  return limits;
}

/** An http:// or https:// URL from `name`; the message names the variable, never the value (it may hold a token). */
function httpUrl(env: Env, name: string): URL | undefined {
  const value = text(env, name);
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a URL (expected http://collector:4318 or https://…)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError(`${name} must be an http:// or https:// URL, not ${url.protocol}//…`);
  return url;
}

/**
 * Traces are on only with OTEL_TRACES_EXPORTER=otlp (and OTEL_SDK_DISABLED not `true`); then every other OTEL_* value
 * the sidecar reads is checked. The exporter itself reads the rest (headers, timeout, compression, certificates).
 */
function tracingConfig(env: Env): TracingConfig | null {
  const disabled = oneOf(env, "OTEL_SDK_DISABLED", ["true", "false"], "false");
  const exporter = oneOf(env, "OTEL_TRACES_EXPORTER", ["otlp", "none"], "none");
  if (exporter === "none" || disabled === "true") return null;
  const protocols = ["http/protobuf", "http/json"] as const;
  const protocol = oneOf(
    env,
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    protocols,
    oneOf(env, "OTEL_EXPORTER_OTLP_PROTOCOL", protocols, "http/protobuf"),
  );
  const base = httpUrl(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (base !== undefined && !base.pathname.endsWith("/")) base.pathname += "/";
  const url =
    httpUrl(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")?.href ??
    (base === undefined ? DEFAULT_OTLP_TRACES_URL : new URL("v1/traces", base).href);
  const name = oneOf(env, "OTEL_TRACES_SAMPLER", TRACE_SAMPLERS, "parentbased_always_on");
  const arg = text(env, "OTEL_TRACES_SAMPLER_ARG");
  if (arg !== undefined && !/^(0|1|0?\.[0-9]+|1\.0+)$/.test(arg))
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, not \`${arg}\``);
  return {
    protocol,
    url,
    serviceName: text(env, "OTEL_SERVICE_NAME") ?? null,
    sampler: { name, ratio: arg === undefined ? 1 : Number(arg) },
  };
}

/** A key from `name` or the file `${name}_FILE` names (one line, owner-only), checked as a Bearer credential can carry it. */
function bearerKey(env: Env, name: string, cwd: string): string | null {
  const inline = text(env, name);
  const file = path(text(env, `${name}_FILE`), cwd);
  if (inline !== undefined && file !== null) throw new ConfigError(`${name} and ${name}_FILE are both set; choose one`);
  const key = file === null ? inline : readKeyFile(`${name}_FILE`, file);
  if (key === undefined) return null;
  // The key is a secret: errors name where it came from, never the value.
  const source = file === null ? name : `the key in ${name}_FILE`;
  if (key.length < MIN_API_KEY_LENGTH) throw new ConfigError(`${source} must be at least ${MIN_API_KEY_LENGTH} characters`);
  if (!API_KEY_PATTERN.test(key)) {
    throw new ConfigError(
      `${source} can hold only letters, digits and - . _ ~ + / (then \`=\` padding): a key with any other character (a space, a quote) can never be sent in an Authorization header`,
    );
  }
  return key;
}

/** A key file: refused when readable by group or others (like the signing key file), empty, or more than one line. */
function readKeyFile(variable: string, file: string): string {
  let key: string;
  try {
    assertOwnerOnly(file, statSync(file).mode, variable);
    key = readFileSync(file, "utf8").trim();
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(`cannot read ${variable} \`${file}\`: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (key === "") throw new ConfigError(`${variable} \`${file}\` is empty`);
  if (/[\r\n]/.test(key)) throw new ConfigError(`${variable} \`${file}\` must hold the key alone, on one line`);
  return key;
}

const KEY_VARIABLES = { all: "SERVICE_API_KEY", deciding: "SERVICE_DECIDE_KEY", reading: "SERVICE_READ_KEY" } as const;

/**
 * SERVICE_API_KEY opens both scopes; SERVICE_DECIDE_KEY and SERVICE_READ_KEY one each. Every scope needs a key
 * (development mode generates the single key when none is set), and no two keys may be the same: a scoped key that
 * is also another key would open what its scope does not.
 */
function apiKeys(env: Env, cwd: string, dev: boolean): ApiKeys {
  const keys: ApiKeys = {
    all: bearerKey(env, KEY_VARIABLES.all, cwd),
    deciding: bearerKey(env, KEY_VARIABLES.deciding, cwd),
    reading: bearerKey(env, KEY_VARIABLES.reading, cwd),
  };
  const set = (Object.keys(KEY_VARIABLES) as (keyof ApiKeys)[]).filter((scope) => keys[scope] !== null);
  if (set.length === 0) {
    if (dev) return keys;
    throw new ConfigError(
      "SERVICE_API_KEY is not set (nor SERVICE_DECIDE_KEY and SERVICE_READ_KEY): every request but GET /health needs a key (or start with --dev to generate one)",
    );
  }
  for (const [i, a] of set.entries()) {
    for (const b of set.slice(i + 1)) {
      if (keys[a] === keys[b]) throw new ConfigError(`${KEY_VARIABLES[a]} and ${KEY_VARIABLES[b]} are the same key: each needs its own`);
    }
  }
  if (keys.all === null) {
    if (keys.reading === null)
      throw new ConfigError("SERVICE_DECIDE_KEY is set but no key opens the reading routes: set SERVICE_READ_KEY (or SERVICE_API_KEY)");
    if (keys.deciding === null)
      throw new ConfigError("SERVICE_READ_KEY is set but no key opens the deciding routes: set SERVICE_DECIDE_KEY (or SERVICE_API_KEY)");
  }
  return keys;
}

/**
 * @param dev development mode: missing keys are generated into the data dir (default `.writ/data`) instead of
 *   being start-up errors
 * @throws ConfigError
 */
export function loadConfig(env: Env, options: { dev?: boolean; cwd?: string } = {}): SidecarConfig {
  const dev = options.dev ?? false;
  const cwd = options.cwd ?? process.cwd();
  const keys = apiKeys(env, cwd, dev);
  const signingKeyPem = text(env, "SERVICE_SIGNING_KEY") ?? null;
  const dataDir = path(text(env, "SERVICE_DATA_DIR") ?? (dev ? DEFAULT_DEV_DATA_DIR : undefined), cwd);
  let signingKeyFile = path(text(env, "SERVICE_SIGNING_KEY_FILE"), cwd);
  if (signingKeyPem !== null && signingKeyFile !== null) {
    throw new ConfigError("SERVICE_SIGNING_KEY and SERVICE_SIGNING_KEY_FILE are both set; choose one");
  }
  if (signingKeyPem === null && signingKeyFile === null && dataDir !== null) signingKeyFile = resolve(dataDir, "signing.key");
  const storage = storageConfig(env, { cwd, dataDir });
  const processes = processesOf(env, storage, dev);
  const refusal = auditRefusal(storage);
  const audit = flag(env, "SERVICE_AUDIT", refusal === null);
  if (audit && refusal !== null) throw new ConfigError(refusal);
  const bundleKeys = text(env, "SERVICE_BUNDLE_KEYS");
  const bundleKeyFiles = bundleKeys === undefined ? [] : bundleKeys.split(",").map((f) => path(f.trim(), cwd)!);
  const requireSignedBundles = flag(env, "SERVICE_REQUIRE_SIGNED_BUNDLES", bundleKeyFiles.length > 0);
  if (requireSignedBundles && bundleKeyFiles.length === 0) {
    throw new ConfigError("SERVICE_REQUIRE_SIGNED_BUNDLES is on but SERVICE_BUNDLE_KEYS names no key to verify bundles with");
  }
  const config: SidecarConfig = {
    apiKeys: keys,
    policiesRoot: path(text(env, "SERVICE_POLICIES_ROOT") ?? "policies", cwd)!,
    signingKeyPem,
    signingKeyFile,
    dataDir,
    storage,
    host: text(env, "SERVICE_HOST") ?? "127.0.0.1",
    portA: port(env, "SERVICE_PORT", 8080),
    portB: port(env, "SERVICE_B_PORT", 8081),
    audit,
    bundleKeyFiles,
    requireSignedBundles,
    bundleSource: bundleSourceConfig(env, cwd, dataDir, bundleKeyFiles),
    bundleLoadTimeoutMs: integer(env, "SERVICE_BUNDLE_LOAD_TIMEOUT_MS", DEFAULT_BUNDLE_LOAD_TIMEOUT_MS, 1, 600_000),
    trustRootFile: path(text(env, "SERVICE_TRUST_ROOT_FILE"), cwd),
    logLevel: oneOf(env, "SERVICE_LOG_LEVEL", LOG_LEVELS, "info"),
    accessLog: flag(env, "SERVICE_ACCESS_LOG", false),
    tracing: tracingConfig(env),
    shutdownTimeoutMs: integer(env, "SERVICE_SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000),
    dev,
    ...auditBounds(env),
    connections: connectionLimits(env),
    auditLog: flag(env, "SERVICE_AUDIT_LOG", true),
    auditCheckpoints: {
      intervalMs: integer(env, "SERVICE_AUDIT_CHECKPOINT_INTERVAL_MS", DEFAULT_CHECKPOINTS.intervalMs, 100, 86_400_000),
      everyRecords: integer(env, "SERVICE_AUDIT_CHECKPOINT_RECORDS", DEFAULT_CHECKPOINTS.everyRecords, 1, 10_000_000),
    },
    maintenance: {
      replaySweepMs: integer(env, "SERVICE_REPLAY_SWEEP_INTERVAL_MS", DEFAULT_MAINTENANCE_INTERVALS.replaySweepMs, 100, 86_400_000),
      auditPruneMs: integer(env, "SERVICE_AUDIT_PRUNE_INTERVAL_MS", DEFAULT_MAINTENANCE_INTERVALS.auditPruneMs, 100, 86_400_000),
    },
    instanceId: instanceId(env),
    // `auto` shares the usable cores out between the sidecar's processes.
    signingThreads: signingThreads(env, () => coresPerProcess(usableCores(), processes.count)),
    processes,
  };
  if (config.bundleSource === null) checkPoliciesRoot(config.policiesRoot);
  if (config.accessLog && (["fatal", "error", "warn", "silent"] as const).some((hiding) => hiding === config.logLevel)) {
    throw new ConfigError(
      `SERVICE_ACCESS_LOG is on but SERVICE_LOG_LEVEL \`${config.logLevel}\` hides its lines, which are at \`info\`: set SERVICE_LOG_LEVEL=info (or lower)`,
    );
  }
  if (config.portA === null && config.portB === null)
    throw new ConfigError("SERVICE_PORT and SERVICE_B_PORT are both `off`: nothing to serve");
  if (config.portA !== null && config.portA === config.portB && config.portA !== 0) {
    throw new ConfigError(`SERVICE_PORT and SERVICE_B_PORT are both ${config.portA}; the surfaces need their own listeners`);
  }
  return config;
}
