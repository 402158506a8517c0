/**
 * PolicyRegistry keeps only bundles that loaded: a failed, timed-out or abandoned load is forgotten, so a bundle fixed
 * on disk is served by the next request without a restart; concurrent requests share one load; a load that the
 * system never completes (the thread pool held, as behind a hung disk) is refused after `loadTimeoutMs`; `close()`
 * refuses the loads under way at once. Before, a FIFO hung a version forever, and shutdown waited on it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BundleError, PolicyRegistry } from "../../src/index.js";
import { writeTransferBundle } from "../support/bundle.js";
import { holdThreadPool, mkfifo, within } from "./stuck-reads.js";

const ID = "payments.transfer";
const VERSION = "1.2.0";
let root: string;
let dir: string;
let scratch: string;

beforeEach(() => {
  root = writeTransferBundle();
  dir = join(root, ID, VERSION);
  scratch = mkdtempSync(join(tmpdir(), "writ-registry-"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

async function refusal(p: Promise<unknown>, ms = 2_000): Promise<BundleError> {
  const error = await within(
    ms,
    "registry.get",
    p.then(
      () => null,
      (e: unknown) => e,
    ),
  );
  expect(error).toBeInstanceOf(BundleError);
  return error as BundleError;
}

describe("only a bundle that loaded is kept", () => {
  it("a FIFO as bundle.sig is refused at once; once it is removed the next get loads the bundle", async () => {
    const registry = new PolicyRegistry(root);
    mkfifo(join(dir, "bundle.sig"));
    expect((await refusal(registry.get(ID, VERSION))).message).toBe("`bundle.sig` is not a regular file (a FIFO)");
    expect((await refusal(registry.get(ID, VERSION))).message).toBe("`bundle.sig` is not a regular file (a FIFO)");
    rmSync(join(dir, "bundle.sig"));
    expect((await within(2_000, "registry.get", registry.get(ID, VERSION))).ir.policyId).toBe(ID);
  });

  it("a manifest that is not JSON, then fixed: served without a new registry, and kept from then on", async () => {
    const registry = new PolicyRegistry(root);
    const manifest = join(dir, "bundle.manifest.json");
    const good = readFileSync(manifest);
    writeFileSync(manifest, "{");
    expect((await refusal(registry.get(ID, VERSION))).code).toBe("BUNDLE_INVALID");
    writeFileSync(manifest, good);
    const loaded = await registry.get(ID, VERSION);
    // Kept: breaking the file now changes nothing until a reload.
    writeFileSync(manifest, "{");
    expect(await registry.get(ID, VERSION)).toBe(loaded);
  });

  it("concurrent requests share one load, whether it succeeds or fails", async () => {
    const registry = new PolicyRegistry(root);
    mkfifo(join(dir, "bundle.sig"));
    const failures = await Promise.all([registry.get(ID, VERSION), registry.get(ID, VERSION)].map((p) => refusal(p)));
    expect(failures[0]).toBe(failures[1]);
    rmSync(join(dir, "bundle.sig"));
    const [a, b] = await Promise.all([registry.get(ID, VERSION), registry.get(ID, VERSION)]);
    expect(a).toBe(b);
  });
});

/** How many loads ended each way. */
function outcomes(registry: PolicyRegistry): Record<string, number> {
  return Object.fromEntries([...registry.loads.totals()].map(([outcome, total]) => [outcome, total.count]));
}

describe("the loads tally (a metric's data)", () => {
  it("counts each load once, by how it ended, with its duration; a bundle kept is not loaded again", async () => {
    const registry = new PolicyRegistry(root);
    const manifest = join(dir, "bundle.manifest.json");
    const good = readFileSync(manifest);
    writeFileSync(manifest, "{");
    await refusal(registry.get(ID, VERSION));
    await refusal(registry.get("no.such.policy", VERSION));
    writeFileSync(manifest, good);
    await Promise.all([registry.get(ID, VERSION), registry.get(ID, VERSION)]);
    await registry.get(ID, VERSION);
    expect(outcomes(registry)).toEqual({ refused: 1, not_found: 1, loaded: 1 });
    for (const total of registry.loads.totals().values()) expect(total.seconds).toBeGreaterThan(0);
  });
});

describe("a load the system does not complete", () => {
  it("is refused after loadTimeoutMs, not kept, and the next get loads once reads complete again", async () => {
    const registry = new PolicyRegistry(root, {}, { loadTimeoutMs: 200 });
    const release = await holdThreadPool(scratch);
    try {
      const started = Date.now();
      const error = await refusal(registry.get(ID, VERSION), 2_000);
      expect(error).toMatchObject({ code: "BUNDLE_INVALID", message: "the bundle did not load within 200 ms" });
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    } finally {
      await release();
    }
    expect((await within(2_000, "registry.get", registry.get(ID, VERSION))).ir.policyId).toBe(ID);
    expect(outcomes(registry)).toEqual({ timeout: 1, loaded: 1 });
    expect(registry.loads.totals().get("timeout")!.seconds).toBeGreaterThanOrEqual(0.19);
  });

  it("close() refuses the loads under way at once, and every load after it", async () => {
    const registry = new PolicyRegistry(root, {}, { loadTimeoutMs: 60_000 });
    const release = await holdThreadPool(scratch);
    try {
      const pending = registry.get(ID, VERSION);
      registry.close();
      expect(await refusal(pending, 500)).toMatchObject({
        code: "BUNDLE_INVALID",
        message: "the service is shutting down: the bundle load under way was abandoned",
      });
      expect(await refusal(registry.get(ID, VERSION), 500)).toMatchObject({ message: "the policy registry is closed" });
    } finally {
      await release();
    }
  });

  it("abandonLoads() refuses the loads under way at once, and serves the loads after it", async () => {
    const registry = new PolicyRegistry(root, {}, { loadTimeoutMs: 60_000 });
    const release = await holdThreadPool(scratch);
    try {
      const pending = registry.get(ID, VERSION);
      registry.abandonLoads();
      expect(await refusal(pending, 500)).toMatchObject({
        code: "BUNDLE_INVALID",
        message: "the service is shutting down: the bundle load under way was abandoned",
      });
    } finally {
      await release();
    }
    expect((await within(2_000, "registry.get", registry.get(ID, VERSION))).ir.policyId).toBe(ID);
    expect(outcomes(registry)).toEqual({ abandoned: 1, loaded: 1 });
  });

  it("refuses a timeout that is not a positive integer", () => {
    expect(() => new PolicyRegistry(root, {}, { loadTimeoutMs: 0 })).toThrow("loadTimeoutMs must be a positive integer, not `0`");
    expect(() => new PolicyRegistry(root, {}, { loadTimeoutMs: 1.5 })).toThrow(RangeError);
  });
});
