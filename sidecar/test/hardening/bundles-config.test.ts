/**
 * `SERVICE_BUNDLE_LOAD_TIMEOUT_MS`: the documented default (docs/sidecar.md), and a ConfigError naming the variable
 * and what it accepts for a bad value.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "@writ/sidecar";

const KEY = { SERVICE_API_KEY: "k".repeat(24) };

describe("SERVICE_BUNDLE_LOAD_TIMEOUT_MS", () => {
  it("defaults to 10000 and takes an integer from 1 to 600000", () => {
    expect(loadConfig(KEY).bundleLoadTimeoutMs).toBe(10_000);
    expect(loadConfig({ ...KEY, SERVICE_BUNDLE_LOAD_TIMEOUT_MS: "1" }).bundleLoadTimeoutMs).toBe(1);
    expect(loadConfig({ ...KEY, SERVICE_BUNDLE_LOAD_TIMEOUT_MS: "600000" }).bundleLoadTimeoutMs).toBe(600_000);
  });

  it.each(["0", "600001", "10s", "-5", "1.5"])("refuses `%s`", (value) => {
    expect(() => loadConfig({ ...KEY, SERVICE_BUNDLE_LOAD_TIMEOUT_MS: value })).toThrow(
      new ConfigError(`SERVICE_BUNDLE_LOAD_TIMEOUT_MS must be an integer from 1 to 600000, not \`${value}\``),
    );
  });
});
