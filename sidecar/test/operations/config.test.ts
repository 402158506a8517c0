/**
 * Start-up configuration: the defaults of docs/sidecar.md, and a clear ConfigError (naming the variable and what it
 * accepts) for every bad value, so the sidecar never starts on a guess.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig, type Env } from "@writ/sidecar";
import { STORAGE_KINDS } from "../../src/storage/registry.js";

/** The working directory of these tests, with the default policies root in it. */
const SRV = mkdtempSync(join(tmpdir(), "writ-config-"));
mkdirSync(join(SRV, "policies"));
writeFileSync(join(SRV, "a-file"), "");
afterAll(() => rmSync(SRV, { recursive: true, force: true }));

/** A key file in SRV with exactly `mode` (whatever the umask). */
function keyFile(name: string, content: string, mode: number): string {
  writeFileSync(join(SRV, name), content);
  chmodSync(join(SRV, name), mode);
  return name;
}

const KEY = { SERVICE_API_KEY: "k".repeat(24) };
const SCOPED = { SERVICE_DECIDE_KEY: "d".repeat(24), SERVICE_READ_KEY: "r".repeat(24) };
const FILE_KEY = "f".repeat(32);
const PRIVATE_KEY_FILE = keyFile("private.key", `${FILE_KEY}\n`, 0o600);
const OTHERS_READ_KEY_FILE = keyFile("others.key", `${FILE_KEY}\n`, 0o604);
const GROUP_READ_KEY_FILE = keyFile("group.key", `${FILE_KEY}\n`, 0o640);
const EMPTY_KEY_FILE = keyFile("empty.key", "\n", 0o600);
const TWO_LINE_KEY_FILE = keyFile("two-lines.key", `${FILE_KEY}\n${"g".repeat(32)}\n`, 0o600);
const SHORT_KEY_FILE = keyFile("short.key", "short\n", 0o600);
const SOURCE = { SERVICE_BUNDLE_SOURCE_URL: "https://bundles.example.com/payments", SERVICE_BUNDLE_KEYS: "release.pub" };
const PG = { SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: "postgresql://writ:s3cret-pass@db.internal:5432/writ?sslmode=verify-full" };

function refusal(env: Env, dev = false): string {
  try {
    loadConfig(env, { dev, cwd: SRV });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig(KEY, { cwd: SRV });
    expect(config).toMatchObject({
      apiKeys: { all: KEY.SERVICE_API_KEY, deciding: null, reading: null },
      policiesRoot: `${SRV}/policies`,
      signingKeyPem: null,
      signingKeyFile: null,
      dataDir: null,
      storage: { kind: "lmdb", dataDir: null, replay: "none" },
      host: "127.0.0.1",
      portA: 8080,
      portB: 8081,
      audit: false,
      requireSignedBundles: false,
      logLevel: "info",
      accessLog: false,
      tracing: null,
      shutdownTimeoutMs: 10_000,
      dev: false,
      connections: {
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 30_000,
        idleTimeoutMs: 60_000,
        maxSockets: 4_096,
      },
      securityEvents: { intervalMs: 60_000, maxSources: 1_000 },
      auditRetention: {
        decisions: { maxAgeMs: null, maxRecords: null },
        verifications: { maxAgeMs: null, maxRecords: null },
        security: { maxAgeMs: 30 * 86_400_000, maxRecords: 100_000 },
      },
      maintenance: { replaySweepMs: 60_000, auditPruneMs: 60_000 },
    });
  });

  it("on PostgreSQL: the database, its pool and timeouts, the replay store and audit in it, no data dir needed", () => {
    expect(loadConfig({ ...KEY, ...PG }, { cwd: SRV })).toMatchObject({
      storage: {
        kind: "postgres",
        database: {
          url: PG.SERVICE_DATABASE_URL,
          poolSize: 10,
          statementTimeoutMs: 5_000,
          connectTimeoutMs: 5_000,
          lockTimeoutMs: 3_000,
          idleInTransactionTimeoutMs: 10_000,
        },
      },
      audit: true,
      dataDir: null,
    });
    writeFileSync(join(SRV, "url"), `${PG.SERVICE_DATABASE_URL}\n`, { mode: 0o600 });
    const fromFile = loadConfig(
      {
        ...KEY,
        SERVICE_STORE: "postgres",
        SERVICE_DATABASE_URL_FILE: "url",
        SERVICE_DATABASE_POOL_SIZE: "25",
        SERVICE_DATABASE_STATEMENT_TIMEOUT_MS: "800",
        SERVICE_DATABASE_CONNECT_TIMEOUT_MS: "300",
      },
      { cwd: SRV },
    );
    expect(fromFile.storage).toEqual({
      kind: "postgres",
      database: {
        url: PG.SERVICE_DATABASE_URL,
        poolSize: 25,
        statementTimeoutMs: 800,
        connectTimeoutMs: 300,
        lockTimeoutMs: 3_000,
        idleInTransactionTimeoutMs: 10_000,
        preparedStatements: true,
      },
      readUrl: null,
    });
  });

  it("on PostgreSQL: named prepared statements on by default, off with SERVICE_DATABASE_PREPARED_STATEMENTS=off", () => {
    const database = (env: Env) => {
      const { storage } = loadConfig({ ...KEY, ...PG, ...env }, { cwd: SRV });
      return storage.kind === "postgres" ? storage.database : null;
    };
    expect(database({})).toMatchObject({ preparedStatements: true });
    expect(database({ SERVICE_DATABASE_PREPARED_STATEMENTS: "off" })).toMatchObject({ preparedStatements: false });
    expect(() => database({ SERVICE_DATABASE_PREPARED_STATEMENTS: "sometimes" })).toThrow(
      "SERVICE_DATABASE_PREPARED_STATEMENTS must be `on` or `off`, not `sometimes`",
    );
  });

  it("on PostgreSQL: the lock timeout and the idle-in-transaction limit of every pooled connection, each within its bounds", () => {
    const database = (env: Env) => {
      const { storage } = loadConfig({ ...KEY, ...PG, ...env }, { cwd: SRV });
      return storage.kind === "postgres" ? storage.database : null;
    };
    expect(database({ SERVICE_DATABASE_LOCK_TIMEOUT_MS: "700", SERVICE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: "2000" })).toMatchObject({
      lockTimeoutMs: 700,
      idleInTransactionTimeoutMs: 2_000,
    });
    expect(database({ SERVICE_DATABASE_LOCK_TIMEOUT_MS: "100", SERVICE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: "1000" })).toMatchObject({
      lockTimeoutMs: 100,
      idleInTransactionTimeoutMs: 1_000,
    });
    expect(
      database({ SERVICE_DATABASE_LOCK_TIMEOUT_MS: "600000", SERVICE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: "3600000" }),
    ).toMatchObject({ lockTimeoutMs: 600_000, idleInTransactionTimeoutMs: 3_600_000 });
    const lock = /^SERVICE_DATABASE_LOCK_TIMEOUT_MS must be an integer from 100 to 600000, not `(.*)`$/;
    const idle = /^SERVICE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS must be an integer from 1000 to 3600000, not `(.*)`$/;
    for (const value of ["0", "99", "600001", "3s", "-1", "off", "1.5"])
      expect(refusal({ ...KEY, ...PG, SERVICE_DATABASE_LOCK_TIMEOUT_MS: value })).toMatch(lock);
    for (const value of ["0", "999", "3600001", "10s", "off"])
      expect(refusal({ ...KEY, ...PG, SERVICE_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: value })).toMatch(idle);
    expect(refusal({ ...KEY, ...PG, SERVICE_DATABASE_LOCK_TIMEOUT_MS: " " })).toBe(
      "SERVICE_DATABASE_LOCK_TIMEOUT_MS is set but empty; unset it or give it a value",
    );
  });

  it("never puts the database URL, a secret, into an error", () => {
    for (const url of ["http://writ:s3cret-pass@db/writ", "not a url s3cret-pass"]) {
      const message = refusal({ ...KEY, SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: url });
      expect(message).toMatch(/SERVICE_DATABASE_URL (must be a postgresql:\/\/ URL|is not a URL)/);
      expect(message).not.toContain("s3cret-pass");
    }
  });

  it("on PostgreSQL: the read database, from SERVICE_DATABASE_READ_URL or its file, never both, never with another store", () => {
    const READ = "postgresql://reader:s3cret-pass@replica:5432/writ";
    const readUrl = (env: Env) => {
      const { storage } = loadConfig({ ...KEY, ...PG, ...env }, { cwd: SRV });
      return storage.kind === "postgres" ? storage.readUrl : undefined;
    };
    expect(readUrl({})).toBeNull();
    expect(readUrl({ SERVICE_DATABASE_READ_URL: READ })).toBe(READ);
    writeFileSync(join(SRV, "read-url"), `${READ}\n`, { mode: 0o600 });
    expect(readUrl({ SERVICE_DATABASE_READ_URL_FILE: "read-url" })).toBe(READ);
    expect(refusal({ ...KEY, ...PG, SERVICE_DATABASE_READ_URL: READ, SERVICE_DATABASE_READ_URL_FILE: "read-url" })).toBe(
      "SERVICE_DATABASE_READ_URL and SERVICE_DATABASE_READ_URL_FILE are both set; choose one",
    );
    for (const variable of ["SERVICE_DATABASE_READ_URL", "SERVICE_DATABASE_READ_URL_FILE"]) {
      expect(refusal({ ...KEY, [variable]: READ })).toBe(
        `${variable} is set but SERVICE_STORE is not \`postgres\`: set SERVICE_STORE=postgres to use the database`,
      );
    }
    // The URL is a secret: errors name the variable, never the value.
    for (const [url, message] of [
      ["http://writ:s3cret-pass@db/writ", "SERVICE_DATABASE_READ_URL must be a postgresql:// URL, not http://…"],
      [
        "not a url s3cret-pass",
        "SERVICE_DATABASE_READ_URL is not a URL (expected postgresql://user@host:5432/database, or with several hosts postgresql://user@host1:5432,host2:5432/database)",
      ],
    ] as const) {
      expect(refusal({ ...KEY, ...PG, SERVICE_DATABASE_READ_URL: url })).toBe(message);
    }
    writeFileSync(join(SRV, "read-url-bad"), "mysql://writ:s3cret-pass@db/writ\n", { mode: 0o600 });
    expect(refusal({ ...KEY, ...PG, SERVICE_DATABASE_READ_URL_FILE: "read-url-bad" })).toBe(
      "SERVICE_DATABASE_READ_URL_FILE's content must be a postgresql:// URL, not mysql://…",
    );
    writeFileSync(join(SRV, "read-url-empty"), "\n", { mode: 0o600 });
    expect(refusal({ ...KEY, ...PG, SERVICE_DATABASE_READ_URL_FILE: "read-url-empty" })).toMatch(
      /^SERVICE_DATABASE_READ_URL_FILE `.*read-url-empty` is empty$/,
    );
    expect(refusal({ ...KEY, ...PG, SERVICE_DATABASE_READ_URL_FILE: "missing-read-url" })).toMatch(
      /^cannot read SERVICE_DATABASE_READ_URL_FILE `.*missing-read-url`: ENOENT$/,
    );
    expect(refusal({ ...KEY, ...PG, SERVICE_DATABASE_READ_URL: " " })).toBe(
      "SERVICE_DATABASE_READ_URL is set but empty; unset it or give it a value",
    );
  });

  it("reads the connection limits and the audit bounds", () => {
    const config = loadConfig(
      {
        ...KEY,
        SERVICE_HEADERS_TIMEOUT_MS: "2000",
        SERVICE_REQUEST_TIMEOUT_MS: "4000",
        SERVICE_KEEP_ALIVE_TIMEOUT_MS: "3000",
        SERVICE_IDLE_TIMEOUT_MS: "5000",
        SERVICE_MAX_SOCKETS: "100",
        SERVICE_AUDIT_SECURITY_INTERVAL_S: "10",
        SERVICE_AUDIT_SECURITY_MAX_SOURCES: "20",
        SERVICE_AUDIT_SECURITY_RETENTION_DAYS: "off",
        SERVICE_AUDIT_DECISIONS_RETENTION_DAYS: "365",
        SERVICE_AUDIT_VERIFICATIONS_MAX_RECORDS: "1000",
      },
      { cwd: SRV },
    );
    expect(config.connections).toEqual({
      headersTimeoutMs: 2_000,
      requestTimeoutMs: 4_000,
      keepAliveTimeoutMs: 3_000,
      idleTimeoutMs: 5_000,
      maxSockets: 100,
    });
    expect(config.securityEvents).toEqual({ intervalMs: 10_000, maxSources: 20 });
    expect(config.auditRetention).toEqual({
      decisions: { maxAgeMs: 365 * 86_400_000, maxRecords: null },
      verifications: { maxAgeMs: null, maxRecords: 1_000 },
      security: { maxAgeMs: null, maxRecords: 100_000 },
    });
  });

  it("reads how often the replay store is swept and the audit trail pruned, each from 100 ms to a day", () => {
    expect(
      loadConfig({ ...KEY, SERVICE_REPLAY_SWEEP_INTERVAL_MS: "20000", SERVICE_AUDIT_PRUNE_INTERVAL_MS: "25000" }, { cwd: SRV }).maintenance,
    ).toEqual({ replaySweepMs: 20_000, auditPruneMs: 25_000 });
    expect(
      loadConfig({ ...KEY, SERVICE_REPLAY_SWEEP_INTERVAL_MS: "100", SERVICE_AUDIT_PRUNE_INTERVAL_MS: "86400000" }, { cwd: SRV })
        .maintenance,
    ).toEqual({ replaySweepMs: 100, auditPruneMs: 86_400_000 });
    for (const name of ["SERVICE_REPLAY_SWEEP_INTERVAL_MS", "SERVICE_AUDIT_PRUNE_INTERVAL_MS"]) {
      for (const value of ["99", "86400001", "1e4", "-1", "60s"]) {
        expect(refusal({ ...KEY, [name]: value })).toBe(`${name} must be an integer from 100 to 86400000, not \`${value}\``);
      }
      expect(refusal({ ...KEY, [name]: " " })).toBe(`${name} is set but empty; unset it or give it a value`);
    }
  });

  it("with a data dir: LMDB replay store, audit on, the signing key file inside it", () => {
    const config = loadConfig({ ...KEY, SERVICE_DATA_DIR: "data" }, { cwd: SRV });
    expect(config).toMatchObject({
      dataDir: `${SRV}/data`,
      storage: { kind: "lmdb", replay: "lmdb" },
      audit: true,
      signingKeyFile: `${SRV}/data/signing.key`,
    });
  });

  it("the data dir's free-space reserve: by default 256 MiB or 2% of the disk, else a size in binary units or a share", () => {
    const reserve = (value?: string) =>
      (
        loadConfig({ ...KEY, SERVICE_DATA_DIR: "data", ...(value === undefined ? {} : { SERVICE_DATA_DIR_RESERVE: value }) }, { cwd: SRV })
          .storage as { reserve: unknown }
      ).reserve;
    expect(reserve()).toBe("default");
    expect(reserve("0")).toEqual({ bytes: 0 });
    expect(reserve("4096")).toEqual({ bytes: 4096 });
    expect(reserve("4096B")).toEqual({ bytes: 4096 });
    expect(reserve("64K")).toEqual({ bytes: 64 * 1024 });
    expect(reserve("512M")).toEqual({ bytes: 512 * 2 ** 20 });
    expect(reserve("512MB")).toEqual({ bytes: 512 * 2 ** 20 });
    expect(reserve("512MiB")).toEqual({ bytes: 512 * 2 ** 20 });
    expect(reserve("2G")).toEqual({ bytes: 2 * 2 ** 30 });
    expect(reserve("1TiB")).toEqual({ bytes: 2 ** 40 });
    expect(reserve("5%")).toEqual({ percent: 5 });
    expect(reserve("0.5%")).toEqual({ percent: 0.5 });
    expect(reserve("50%")).toEqual({ percent: 50 });
    for (const value of ["51%", "2 GB", "-1", "1.5G", "1P", "lots", "9999999999T"]) {
      expect(refusal({ ...KEY, SERVICE_DATA_DIR: "data", SERVICE_DATA_DIR_RESERVE: value })).toBe(
        `SERVICE_DATA_DIR_RESERVE must be a size (\`512M\`, \`512MiB\`, \`2G\`: binary units; \`0\`: none) or a share of the data dir's disk up to 50% (\`5%\`), not \`${value}\``,
      );
    }
  });

  it("in development mode: no API key needed, data in .writ/data", () => {
    expect(loadConfig({}, { dev: true, cwd: SRV })).toMatchObject({
      apiKeys: { all: null, deciding: null, reading: null },
      dataDir: `${SRV}/.writ/data`,
      storage: { kind: "lmdb", dataDir: `${SRV}/.writ/data`, replay: "lmdb" },
      audit: true,
    });
  });

  it("with scoped keys: each from its variable or its file, with or without SERVICE_API_KEY beside them", () => {
    expect(loadConfig(SCOPED, { cwd: SRV }).apiKeys).toEqual({
      all: null,
      deciding: SCOPED.SERVICE_DECIDE_KEY,
      reading: SCOPED.SERVICE_READ_KEY,
    });
    expect(loadConfig({ ...KEY, ...SCOPED }, { cwd: SRV }).apiKeys).toEqual({
      all: KEY.SERVICE_API_KEY,
      deciding: SCOPED.SERVICE_DECIDE_KEY,
      reading: SCOPED.SERVICE_READ_KEY,
    });
    expect(
      loadConfig({ SERVICE_DECIDE_KEY: SCOPED.SERVICE_DECIDE_KEY, SERVICE_READ_KEY_FILE: PRIVATE_KEY_FILE }, { cwd: SRV }).apiKeys,
    ).toEqual({
      all: null,
      deciding: SCOPED.SERVICE_DECIDE_KEY,
      reading: FILE_KEY,
    });
    expect(loadConfig({ SERVICE_API_KEY_FILE: join(SRV, PRIVATE_KEY_FILE) }, { cwd: SRV }).apiKeys).toEqual({
      all: FILE_KEY,
      deciding: null,
      reading: null,
    });
    // The single key and the admin key beside scoped ones: one scope is enough when SERVICE_API_KEY opens the other.
    expect(loadConfig({ ...KEY, SERVICE_READ_KEY: SCOPED.SERVICE_READ_KEY }, { cwd: SRV }).apiKeys).toEqual({
      all: KEY.SERVICE_API_KEY,
      deciding: null,
      reading: SCOPED.SERVICE_READ_KEY,
    });
    // --dev generates the single key only when no key is set.
    expect(loadConfig(SCOPED, { dev: true, cwd: SRV }).apiKeys).toEqual({
      all: null,
      deciding: SCOPED.SERVICE_DECIDE_KEY,
      reading: SCOPED.SERVICE_READ_KEY,
    });
    expect(refusal({ SERVICE_DECIDE_KEY: SCOPED.SERVICE_DECIDE_KEY }, true)).toMatch(
      /SERVICE_DECIDE_KEY is set but no key opens the reading routes/,
    );
  });

  it("never puts a key, a secret, into an error", () => {
    for (const env of [
      { SERVICE_DECIDE_KEY: `${"s3cret".repeat(4)} x`, SERVICE_READ_KEY: SCOPED.SERVICE_READ_KEY },
      { SERVICE_DECIDE_KEY: "s3cret", SERVICE_READ_KEY: SCOPED.SERVICE_READ_KEY },
      { SERVICE_DECIDE_KEY: "s3cret-s3cret-s3cret", SERVICE_READ_KEY: "s3cret-s3cret-s3cret" },
    ]) {
      expect(refusal(env)).not.toContain("s3cret");
    }
    expect(refusal({ SERVICE_API_KEY_FILE: TWO_LINE_KEY_FILE })).not.toContain(FILE_KEY);
  });

  it("reads the access log switch and the standard OpenTelemetry variables; traces only with OTEL_TRACES_EXPORTER=otlp", () => {
    expect(loadConfig({ ...KEY, SERVICE_ACCESS_LOG: "on" }, { cwd: SRV }).accessLog).toBe(true);
    expect(loadConfig({ ...KEY, SERVICE_ACCESS_LOG: "on", SERVICE_LOG_LEVEL: "debug" }, { cwd: SRV }).accessLog).toBe(true);
    // Without the exporter, other OTEL_* settings (a platform's, for every service) are not looked at.
    expect(
      loadConfig({ ...KEY, OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, { cwd: SRV })
        .tracing,
    ).toBeNull();
    expect(loadConfig({ ...KEY, OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "true" }, { cwd: SRV }).tracing).toBeNull();
    expect(loadConfig({ ...KEY, OTEL_TRACES_EXPORTER: "otlp" }, { cwd: SRV }).tracing).toEqual({
      protocol: "http/protobuf",
      url: "http://localhost:4318/v1/traces",
      serviceName: null,
      sampler: { name: "parentbased_always_on", ratio: 1 },
    });
    const otel = {
      ...KEY,
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.internal:4318/otlp",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    };
    expect(
      loadConfig(
        { ...otel, OTEL_SERVICE_NAME: "payments-writ", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" },
        { cwd: SRV },
      ).tracing,
    ).toEqual({
      protocol: "http/json",
      url: "https://collector.internal:4318/otlp/v1/traces",
      serviceName: "payments-writ",
      sampler: { name: "parentbased_traceidratio", ratio: 0.25 },
    });
    // The signal's own settings win over the general ones; its endpoint is used as given.
    expect(
      loadConfig(
        { ...otel, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:9999/in", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf" },
        { cwd: SRV },
      ).tracing,
    ).toMatchObject({ protocol: "http/protobuf", url: "http://traces:9999/in" });
  });

  it.each<[string, Env, RegExp]>([
    [
      "an access log switch that is neither on nor off",
      { ...KEY, SERVICE_ACCESS_LOG: "verbose" },
      /^SERVICE_ACCESS_LOG must be `on` or `off`, not `verbose`$/,
    ],
    [
      "an access log a log level hides",
      { ...KEY, SERVICE_ACCESS_LOG: "on", SERVICE_LOG_LEVEL: "warn" },
      /^SERVICE_ACCESS_LOG is on but SERVICE_LOG_LEVEL `warn` hides its lines/,
    ],
    [
      "an access log with the logs silent",
      { ...KEY, SERVICE_ACCESS_LOG: "on", SERVICE_LOG_LEVEL: "silent" },
      /SERVICE_LOG_LEVEL `silent` hides its lines/,
    ],
    [
      "an exporter the sidecar does not have",
      { ...KEY, OTEL_TRACES_EXPORTER: "console" },
      /^OTEL_TRACES_EXPORTER must be one of `otlp`, `none`, not `console`$/,
    ],
    [
      "OTLP over gRPC",
      { ...KEY, OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
      /^OTEL_EXPORTER_OTLP_PROTOCOL must be one of `http\/protobuf`, `http\/json`, not `grpc`$/,
    ],
    [
      "an endpoint that is not a URL",
      { ...KEY, OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" },
      /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/,
    ],
    [
      "a traces endpoint that is no URL at all",
      { ...KEY, OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "not a url" },
      /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not a URL/,
    ],
    [
      "an unknown sampler",
      { ...KEY, OTEL_TRACES_EXPORTER: "otlp", OTEL_TRACES_SAMPLER: "jaeger_remote" },
      /^OTEL_TRACES_SAMPLER must be one of `always_on`, /,
    ],
    [
      "a sampler ratio above 1",
      { ...KEY, OTEL_TRACES_EXPORTER: "otlp", OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1.5" },
      /^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, not `1\.5`$/,
    ],
    [
      "a sampler ratio that is not a number",
      { ...KEY, OTEL_TRACES_EXPORTER: "otlp", OTEL_TRACES_SAMPLER_ARG: "half" },
      /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, not `half`/,
    ],
    [
      "OTEL_SDK_DISABLED that is not a boolean",
      { ...KEY, OTEL_SDK_DISABLED: "yes" },
      /^OTEL_SDK_DISABLED must be one of `true`, `false`, not `yes`$/,
    ],
  ])("refuses %s", (_name, env, message) => {
    expect(refusal(env)).toMatch(message);
  });

  it("with a remote bundle source: its URL as a folder, the defaults, the cache in the data dir, and no policies root checked", () => {
    const config = loadConfig({ ...KEY, ...SOURCE, SERVICE_DATA_DIR: "data" }, { cwd: join(SRV, "a-file-is-not-a-cwd-here") });
    expect(config.bundleSource).toEqual({
      url: "https://bundles.example.com/payments/",
      pollIntervalMs: 30_000,
      fetchTimeoutMs: 10_000,
      cacheDir: join(SRV, "a-file-is-not-a-cwd-here", "data", "bundle-source"),
    });
    expect(
      loadConfig({ ...KEY, ...SOURCE, SERVICE_BUNDLE_CACHE_DIR: "/var/cache/writ", SERVICE_BUNDLE_POLL_INTERVAL_MS: "5000" }, { cwd: SRV })
        .bundleSource,
    ).toMatchObject({
      cacheDir: "/var/cache/writ",
      pollIntervalMs: 5_000,
    });
  });

  it.each<[string, Env, RegExp | string]>([
    [
      "a bundle source that is not a URL",
      { ...KEY, ...SOURCE, SERVICE_BUNDLE_SOURCE_URL: "bundles" },
      /SERVICE_BUNDLE_SOURCE_URL is not a URL/,
    ],
    [
      "a bundle source that is not HTTP",
      { ...KEY, ...SOURCE, SERVICE_BUNDLE_SOURCE_URL: "file:///srv/bundles/" },
      /must be an http:\/\/ or https:\/\/ URL, not file:/,
    ],
    [
      "a bundle source and a policies root",
      { ...KEY, ...SOURCE, SERVICE_DATA_DIR: "d", SERVICE_POLICIES_ROOT: "policies" },
      /both set; bundles come from one of them/,
    ],
    [
      "a bundle source without bundle keys",
      { ...KEY, SERVICE_BUNDLE_SOURCE_URL: SOURCE.SERVICE_BUNDLE_SOURCE_URL, SERVICE_DATA_DIR: "d" },
      /must be signed/,
    ],
    ["a bundle source with nowhere to keep its last good set", { ...KEY, ...SOURCE }, /needs SERVICE_BUNDLE_CACHE_DIR or SERVICE_DATA_DIR/],
    [
      "a poll interval below 100 ms",
      { ...KEY, ...SOURCE, SERVICE_DATA_DIR: "d", SERVICE_BUNDLE_POLL_INTERVAL_MS: "10" },
      /SERVICE_BUNDLE_POLL_INTERVAL_MS must be an integer from 100/,
    ],
    ["no API key", {}, /SERVICE_API_KEY is not set/],
    [
      "an API key with a space, which no header can carry",
      { SERVICE_API_KEY: "correct horse battery staple" },
      /SERVICE_API_KEY can hold only letters, digits and/,
    ],
    ["an API key with a quote", { SERVICE_API_KEY: `${"k".repeat(20)}"` }, /SERVICE_API_KEY can hold only/],
    ["a missing policies root", { ...KEY, SERVICE_POLICIES_ROOT: "/nonexistent" }, /SERVICE_POLICIES_ROOT `\/nonexistent` does not exist/],
    ["a policies root that is a file", { ...KEY, SERVICE_POLICIES_ROOT: "a-file" }, /SERVICE_POLICIES_ROOT `.*a-file` is not a directory/],
    [
      "a headers timeout longer than the request timeout",
      { ...KEY, SERVICE_HEADERS_TIMEOUT_MS: "5000", SERVICE_REQUEST_TIMEOUT_MS: "1000" },
      /must not exceed SERVICE_REQUEST_TIMEOUT_MS/,
    ],
    [
      "a socket cap that is not a number",
      { ...KEY, SERVICE_MAX_SOCKETS: "many" },
      /SERVICE_MAX_SOCKETS must be an integer from 16 to 1000000, not `many`/,
    ],
    [
      "a retention that is neither a number nor off",
      { ...KEY, SERVICE_AUDIT_SECURITY_RETENTION_DAYS: "forever" },
      /SERVICE_AUDIT_SECURITY_RETENTION_DAYS must be an integer from 1 to 36500 or `off`/,
    ],
    ["a short API key", { SERVICE_API_KEY: "short" }, /SERVICE_API_KEY must be at least 16 characters/],
    [
      "a reading key without a deciding key",
      { SERVICE_READ_KEY: SCOPED.SERVICE_READ_KEY },
      /SERVICE_READ_KEY is set but no key opens the deciding routes: set SERVICE_DECIDE_KEY \(or SERVICE_API_KEY\)/,
    ],
    [
      "a deciding key without a reading key",
      { SERVICE_DECIDE_KEY: SCOPED.SERVICE_DECIDE_KEY },
      /SERVICE_DECIDE_KEY is set but no key opens the reading routes: set SERVICE_READ_KEY \(or SERVICE_API_KEY\)/,
    ],
    [
      "the same key for deciding and reading",
      { SERVICE_DECIDE_KEY: SCOPED.SERVICE_DECIDE_KEY, SERVICE_READ_KEY: SCOPED.SERVICE_DECIDE_KEY },
      /^SERVICE_DECIDE_KEY and SERVICE_READ_KEY are the same key: each needs its own$/,
    ],
    [
      "the API key again as a scoped key",
      { ...KEY, ...SCOPED, SERVICE_READ_KEY: KEY.SERVICE_API_KEY },
      /^SERVICE_API_KEY and SERVICE_READ_KEY are the same key/,
    ],
    [
      "the same key, once from a file",
      { SERVICE_DECIDE_KEY: FILE_KEY, SERVICE_READ_KEY_FILE: PRIVATE_KEY_FILE },
      /^SERVICE_DECIDE_KEY and SERVICE_READ_KEY are the same key/,
    ],
    [
      "an API key and an API key file",
      { ...KEY, SERVICE_API_KEY_FILE: PRIVATE_KEY_FILE },
      /^SERVICE_API_KEY and SERVICE_API_KEY_FILE are both set; choose one$/,
    ],
    [
      "a deciding key and its file",
      { ...SCOPED, SERVICE_DECIDE_KEY_FILE: PRIVATE_KEY_FILE },
      /^SERVICE_DECIDE_KEY and SERVICE_DECIDE_KEY_FILE are both set; choose one$/,
    ],
    [
      "a reading key and its file",
      { ...SCOPED, SERVICE_READ_KEY_FILE: PRIVATE_KEY_FILE },
      /^SERVICE_READ_KEY and SERVICE_READ_KEY_FILE are both set; choose one$/,
    ],
    [
      "a key file readable by others",
      { SERVICE_API_KEY_FILE: OTHERS_READ_KEY_FILE },
      /^SERVICE_API_KEY_FILE `.*others\.key` is readable by other users \(mode 604\); run `chmod 600 /,
    ],
    [
      "a key file readable by the group",
      { ...SCOPED, SERVICE_DECIDE_KEY: undefined, SERVICE_DECIDE_KEY_FILE: GROUP_READ_KEY_FILE },
      /^SERVICE_DECIDE_KEY_FILE `.*group\.key` is readable by other users \(mode 640\)/,
    ],
    [
      "a reading key file readable by others",
      { ...SCOPED, SERVICE_READ_KEY: undefined, SERVICE_READ_KEY_FILE: OTHERS_READ_KEY_FILE },
      /^SERVICE_READ_KEY_FILE `.*others\.key` is readable by other users/,
    ],
    [
      "a key file that does not exist",
      { SERVICE_API_KEY_FILE: "missing.key" },
      /^cannot read SERVICE_API_KEY_FILE `.*missing\.key`: ENOENT$/,
    ],
    ["an empty key file", { SERVICE_API_KEY_FILE: EMPTY_KEY_FILE }, /^SERVICE_API_KEY_FILE `.*empty\.key` is empty$/],
    [
      "a key file of two lines",
      { SERVICE_API_KEY_FILE: TWO_LINE_KEY_FILE },
      /^SERVICE_API_KEY_FILE `.*two-lines\.key` must hold the key alone, on one line$/,
    ],
    ["a short key in a file", { SERVICE_API_KEY_FILE: SHORT_KEY_FILE }, /^the key in SERVICE_API_KEY_FILE must be at least 16 characters$/],
    ["a short deciding key", { ...SCOPED, SERVICE_DECIDE_KEY: "short" }, /^SERVICE_DECIDE_KEY must be at least 16 characters$/],
    [
      "a reading key with a space",
      { ...SCOPED, SERVICE_READ_KEY: "correct horse battery staple" },
      /^SERVICE_READ_KEY can hold only letters, digits and/,
    ],
    ["an empty value", { ...KEY, SERVICE_HOST: " " }, /SERVICE_HOST is set but empty/],
    [
      "a port that is not a number",
      { ...KEY, SERVICE_PORT: "http" },
      /SERVICE_PORT must be a port number from 0 to 65535 or `off`, not `http`/,
    ],
    ["a port out of range", { ...KEY, SERVICE_B_PORT: "70000" }, /SERVICE_B_PORT must be a port number/],
    ["both surfaces off", { ...KEY, SERVICE_PORT: "off", SERVICE_B_PORT: "off" }, /both `off`/],
    ["both surfaces on one port", { ...KEY, SERVICE_PORT: "9000", SERVICE_B_PORT: "9000" }, /both 9000/],
    ["a key and a key file", { ...KEY, SERVICE_SIGNING_KEY: "pem", SERVICE_SIGNING_KEY_FILE: "k.pem" }, /both set; choose one/],
    [
      "an unknown replay store",
      { ...KEY, SERVICE_REPLAY_STORE: "redis" },
      /SERVICE_REPLAY_STORE must be one of `lmdb`, `memory`, `none`, not `redis`/,
    ],
    ["an LMDB store without a data dir", { ...KEY, SERVICE_REPLAY_STORE: "lmdb" }, /needs a directory/],
    ["audit without a data dir", { ...KEY, SERVICE_AUDIT: "on" }, /SERVICE_AUDIT is on but SERVICE_DATA_DIR is not set/],
    ["an on/off value that is neither", { ...KEY, SERVICE_AUDIT: "yes" }, /SERVICE_AUDIT must be `on` or `off`, not `yes`/],
    // Every registered engine, whichever they are (docs/storage-engines.md: registering one edits no test).
    [
      "an unknown store",
      { ...KEY, SERVICE_STORE: "redis" },
      `SERVICE_STORE must be one of ${STORAGE_KINDS.map((k) => `\`${k}\``).join(", ")}, not \`redis\``,
    ],
    [
      "postgres without a database",
      { ...KEY, SERVICE_STORE: "postgres" },
      /neither SERVICE_DATABASE_URL nor SERVICE_DATABASE_URL_FILE is set/,
    ],
    [
      "a database URL without the postgres store",
      { ...KEY, SERVICE_DATABASE_URL: "postgresql://db/writ" },
      /SERVICE_STORE is not `postgres`/,
    ],
    ["a database URL and a URL file", { ...KEY, ...PG, SERVICE_DATABASE_URL_FILE: "url" }, /both set; choose one/],
    [
      "a URL file that cannot be read",
      { ...KEY, SERVICE_STORE: "postgres", SERVICE_DATABASE_URL_FILE: "missing-url" },
      /cannot read SERVICE_DATABASE_URL_FILE `.*missing-url`: ENOENT/,
    ],
    [
      "another replay store with postgres",
      { ...KEY, ...PG, SERVICE_REPLAY_STORE: "lmdb" },
      /SERVICE_REPLAY_STORE must be one of `postgres`, not `lmdb`/,
    ],
    [
      "record compression with postgres",
      { ...KEY, ...PG, SERVICE_AUDIT_COMPRESSION: "on" },
      /SERVICE_AUDIT_COMPRESSION.*SERVICE_STORE is not `lmdb`/,
    ],
    [
      "a data dir reserve with postgres",
      { ...KEY, ...PG, SERVICE_DATA_DIR_RESERVE: "1G" },
      /SERVICE_DATA_DIR_RESERVE is set but SERVICE_STORE is not `lmdb`/,
    ],
    [
      "a pool of zero",
      { ...KEY, ...PG, SERVICE_DATABASE_POOL_SIZE: "0" },
      /SERVICE_DATABASE_POOL_SIZE must be an integer from 1 to 1000, not `0`/,
    ],
    ["signed bundles without keys", { ...KEY, SERVICE_REQUIRE_SIGNED_BUNDLES: "on" }, /names no key/],
    ["an unknown log level", { ...KEY, SERVICE_LOG_LEVEL: "loud" }, /SERVICE_LOG_LEVEL must be one of/],
    [
      "a shutdown timeout that is not an integer",
      { ...KEY, SERVICE_SHUTDOWN_TIMEOUT_MS: "5s" },
      /SERVICE_SHUTDOWN_TIMEOUT_MS must be an integer from 0 to 600000, not `5s`/,
    ],
  ])("refuses %s", (_name, env, message) => {
    expect(refusal(env)).toMatch(message);
  });
});
