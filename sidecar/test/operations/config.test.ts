/**
 * Start-up configuration: the defaults of docs/sidecar.md, and a clear ConfigError (naming the variable and what it
 * accepts) for every bad value, so the sidecar never starts on a guess.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, type Env } from "@writ/sidecar";

const KEY = { SERVICE_API_KEY: "k".repeat(24) };

function refusal(env: Env, dev = false): string {
  try {
    loadConfig(env, { dev, cwd: "/srv" });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig(KEY, { cwd: "/srv" });
    expect(config).toMatchObject({
      apiKey: KEY.SERVICE_API_KEY,
      policiesRoot: "/srv/policies",
      signingKeyPem: null,
      signingKeyFile: null,
      dataDir: null,
      host: "127.0.0.1",
      portA: 8080,
      portB: 8081,
      replayStore: "none",
      audit: false,
      requireSignedBundles: false,
      logLevel: "info",
      shutdownTimeoutMs: 10_000,
      dev: false,
    });
  });

  it("with a data dir: LMDB replay store, audit on, the signing key file inside it", () => {
    const config = loadConfig({ ...KEY, SERVICE_DATA_DIR: "data" }, { cwd: "/srv" });
    expect(config).toMatchObject({ dataDir: "/srv/data", replayStore: "lmdb", audit: true, signingKeyFile: "/srv/data/signing.key" });
  });

  it("in development mode: no API key needed, data in .writ/data", () => {
    expect(loadConfig({}, { dev: true, cwd: "/srv" })).toMatchObject({ apiKey: null, dataDir: "/srv/.writ/data", replayStore: "lmdb", audit: true });
  });

  it.each<[string, Env, RegExp]>([
    ["no API key", {}, /SERVICE_API_KEY is not set/],
    ["a short API key", { SERVICE_API_KEY: "short" }, /SERVICE_API_KEY must be at least 16 characters/],
    ["an empty value", { ...KEY, SERVICE_HOST: " " }, /SERVICE_HOST is set but empty/],
    ["a port that is not a number", { ...KEY, SERVICE_PORT: "http" }, /SERVICE_PORT must be a port number from 0 to 65535 or `off`, not `http`/],
    ["a port out of range", { ...KEY, SERVICE_B_PORT: "70000" }, /SERVICE_B_PORT must be a port number/],
    ["both surfaces off", { ...KEY, SERVICE_PORT: "off", SERVICE_B_PORT: "off" }, /both `off`/],
    ["both surfaces on one port", { ...KEY, SERVICE_PORT: "9000", SERVICE_B_PORT: "9000" }, /both 9000/],
    ["a key and a key file", { ...KEY, SERVICE_SIGNING_KEY: "pem", SERVICE_SIGNING_KEY_FILE: "k.pem" }, /both set; choose one/],
    ["an unknown replay store", { ...KEY, SERVICE_REPLAY_STORE: "redis" }, /SERVICE_REPLAY_STORE must be one of `lmdb`, `memory`, `none`, not `redis`/],
    ["an LMDB store without a data dir", { ...KEY, SERVICE_REPLAY_STORE: "lmdb" }, /needs a directory/],
    ["audit without a data dir", { ...KEY, SERVICE_AUDIT: "on" }, /SERVICE_AUDIT is on but SERVICE_DATA_DIR is not set/],
    ["an on/off value that is neither", { ...KEY, SERVICE_AUDIT: "yes" }, /SERVICE_AUDIT must be `on` or `off`, not `yes`/],
    ["signed bundles without keys", { ...KEY, SERVICE_REQUIRE_SIGNED_BUNDLES: "on" }, /names no key/],
    ["an unknown log level", { ...KEY, SERVICE_LOG_LEVEL: "loud" }, /SERVICE_LOG_LEVEL must be one of/],
    ["a shutdown timeout that is not an integer", { ...KEY, SERVICE_SHUTDOWN_TIMEOUT_MS: "5s" }, /SERVICE_SHUTDOWN_TIMEOUT_MS must be an integer from 0 to 600000, not `5s`/],
  ])("refuses %s", (_name, env, message) => {
    expect(refusal(env)).toMatch(message);
  });
});
