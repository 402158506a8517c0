/**
 * The sidecar's configuration, read from the environment (DESIGN.md section 4; docs/sidecar.md lists every
 * setting). Every bad value is a start-up error naming the variable and what it accepts: a signing service must not
 * start on a guess.
 */
import { isAbsolute, resolve } from "node:path";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export type Env = Readonly<Record<string, string | undefined>>;

export interface SidecarConfig {
  /** Bearer key of both surfaces; null only in development mode before it is generated (see `dev`). */
  readonly apiKey: string | null;
  readonly policiesRoot: string;
  /** PEM PKCS8 key from `SERVICE_SIGNING_KEY` (signing_mode `env`), else the key file (signing_mode `disk`). */
  readonly signingKeyPem: string | null;
  readonly signingKeyFile: string | null;
  /** LMDB environment (replay, audit, Surface B); null: no durable store. */
  readonly dataDir: string | null;
  readonly host: string;
  /** null: the surface is off. */
  readonly portA: number | null;
  readonly portB: number | null;
  readonly replayStore: "lmdb" | "memory" | "none";
  readonly audit: boolean;
  /** SPKI PEM files of the keys a `bundle.sig` must verify against. */
  readonly bundleKeyFiles: readonly string[];
  readonly requireSignedBundles: boolean;
  /** A trust root document (`{trustRootVersion, keys: [PEM…]}`) of earlier keys still accepted by `/verify`. */
  readonly trustRootFile: string | null;
  readonly logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** How long graceful shutdown waits for requests in flight before closing anyway. */
  readonly shutdownTimeoutMs: number;
  /** Development mode (`--dev`, `npm start`): generates and keeps the API key and signing key in the data dir. */
  readonly dev: boolean;
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
const DEFAULT_DEV_DATA_DIR = ".writ/data";
/** Shortest API key accepted: 128 bits of base64 or hex is at least 22 characters. */
export const MIN_API_KEY_LENGTH = 16;

function text(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  if (value.trim() === "") throw new ConfigError(`${name} is set but empty; unset it or give it a value`);
  return value;
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

function flag(env: Env, name: string, fallback: boolean): boolean {
  const value = text(env, name);
  if (value === undefined) return fallback;
  if (value === "on" || value === "true" || value === "1") return true;
  if (value === "off" || value === "false" || value === "0") return false;
  throw new ConfigError(`${name} must be \`on\` or \`off\`, not \`${value}\``);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = text(env, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(`${name} must be one of ${allowed.map((a) => `\`${a}\``).join(", ")}, not \`${value}\``);
  }
  return value as T;
}

function path(value: string | undefined, cwd: string): string | null {
  return value === undefined ? null : isAbsolute(value) ? value : resolve(cwd, value);
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = text(env, name);
  if (value === undefined) return fallback;
  if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, not \`${value}\``);
  }
  return Number(value);
}

/**
 * @param dev development mode: missing keys are generated into the data dir (default `.writ/data`) instead of
 *   being start-up errors
 * @throws ConfigError
 */
export function loadConfig(env: Env, options: { dev?: boolean; cwd?: string } = {}): SidecarConfig {
  const dev = options.dev ?? false;
  const cwd = options.cwd ?? process.cwd();
  const apiKey = text(env, "SERVICE_API_KEY") ?? null;
  if (apiKey !== null && apiKey.length < MIN_API_KEY_LENGTH) {
    throw new ConfigError(`SERVICE_API_KEY must be at least ${MIN_API_KEY_LENGTH} characters`);
  }
  if (apiKey === null && !dev) {
    throw new ConfigError("SERVICE_API_KEY is not set: every request but GET /health needs it (or start with --dev to generate one)");
  }
  const signingKeyPem = text(env, "SERVICE_SIGNING_KEY") ?? null;
  const dataDir = path(text(env, "SERVICE_DATA_DIR") ?? (dev ? DEFAULT_DEV_DATA_DIR : undefined), cwd);
  let signingKeyFile = path(text(env, "SERVICE_SIGNING_KEY_FILE"), cwd);
  if (signingKeyPem !== null && signingKeyFile !== null) {
    throw new ConfigError("SERVICE_SIGNING_KEY and SERVICE_SIGNING_KEY_FILE are both set; choose one");
  }
  if (signingKeyPem === null && signingKeyFile === null && dataDir !== null) signingKeyFile = resolve(dataDir, "signing.key");
  const replayStore = oneOf(env, "SERVICE_REPLAY_STORE", ["lmdb", "memory", "none"], dataDir === null ? "none" : "lmdb");
  if (replayStore === "lmdb" && dataDir === null) {
    throw new ConfigError("SERVICE_REPLAY_STORE is `lmdb` but SERVICE_DATA_DIR is not set: the LMDB store needs a directory");
  }
  const audit = flag(env, "SERVICE_AUDIT", dataDir !== null);
  if (audit && dataDir === null) throw new ConfigError("SERVICE_AUDIT is on but SERVICE_DATA_DIR is not set: the audit trail needs a directory");
  const bundleKeys = text(env, "SERVICE_BUNDLE_KEYS");
  const bundleKeyFiles = bundleKeys === undefined ? [] : bundleKeys.split(",").map((f) => path(f.trim(), cwd)!);
  const requireSignedBundles = flag(env, "SERVICE_REQUIRE_SIGNED_BUNDLES", bundleKeyFiles.length > 0);
  if (requireSignedBundles && bundleKeyFiles.length === 0) {
    throw new ConfigError("SERVICE_REQUIRE_SIGNED_BUNDLES is on but SERVICE_BUNDLE_KEYS names no key to verify bundles with");
  }
  const config: SidecarConfig = {
    apiKey,
    policiesRoot: path(text(env, "SERVICE_POLICIES_ROOT") ?? "policies", cwd)!,
    signingKeyPem,
    signingKeyFile,
    dataDir,
    host: text(env, "SERVICE_HOST") ?? "127.0.0.1",
    portA: port(env, "SERVICE_PORT", 8080),
    portB: port(env, "SERVICE_B_PORT", 8081),
    replayStore,
    audit,
    bundleKeyFiles,
    requireSignedBundles,
    trustRootFile: path(text(env, "SERVICE_TRUST_ROOT_FILE"), cwd),
    logLevel: oneOf(env, "SERVICE_LOG_LEVEL", LOG_LEVELS, "info"),
    shutdownTimeoutMs: integer(env, "SERVICE_SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000),
    dev,
  };
  if (config.portA === null && config.portB === null) throw new ConfigError("SERVICE_PORT and SERVICE_B_PORT are both `off`: nothing to serve");
  if (config.portA !== null && config.portA === config.portB && config.portA !== 0) {
    throw new ConfigError(`SERVICE_PORT and SERVICE_B_PORT are both ${config.portA}; the surfaces need their own listeners`);
  }
  return config;
}
