/**
 * The remote bundle source against a real HTTP server in this process: what it serves is verified
 * whole before the registry serves any of it, refused sets change nothing, an unchanged index costs a 304, the last
 * good set survives a restart without the network, and aliases resolve to the version signed into the attestation.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PolicyRegistry, type PublicKey, loadPublicKeyPem } from "@writ/runtime";
import { readFileSync } from "node:fs";
import type { BundleSourceConfig } from "../../src/bundles/remote-source.js";
import { RemoteBundleSource } from "../../src/bundles/remote-source.js";
import { BundleServer, POLICY_ID, bundleKey, sourceFiles, transferArchive, type BundleKey } from "../support/bundle-source.js";

let server: BundleServer;
let signer: BundleKey;
let keys: PublicKey[];
let config: BundleSourceConfig;
const sources: RemoteBundleSource[] = [];
const messages: string[] = [];
const log = { info: (m: string) => messages.push(m), warn: (m: string) => messages.push(m), error: (m: string) => messages.push(m) };

function source(registry = new PolicyRegistry("/nonexistent")): { registry: PolicyRegistry; source: RemoteBundleSource } {
  const remote = new RemoteBundleSource(config, registry, keys, log);
  sources.push(remote);
  return { registry, source: remote };
}

const hashOf = async (registry: PolicyRegistry, version: string) => (await registry.get(POLICY_ID, version)).manifest.bundle_hash;

beforeEach(async () => {
  server = await BundleServer.start();
  signer = await bundleKey();
  keys = [loadPublicKeyPem(readFileSync(signer.publicKeyFile, "utf8"))];
  const cacheDir = join(await mkdtemp(join(tmpdir(), "writ-source-cache-")), "cache");
  config = { url: server.url, pollIntervalMs: 60_000, fetchTimeoutMs: 1_000, cacheDir };
  messages.length = 0;
});

afterEach(async () => {
  await Promise.all(sources.splice(0).map((s) => s.close()));
  await server.stop().catch(() => undefined);
});

describe("a remote bundle source", () => {
  it("serves a signed set, then a newer one; an unchanged index is a 304 and fetches no archive again", async () => {
    const v1 = transferArchive("1.0.0", signer.key);
    server.files = sourceFiles({ serial: 1, archives: new Map([["1.0.0", v1]]) }, signer.key);
    const { registry, source: remote } = source();
    await remote.start();
    expect(remote.status()).toMatchObject({ reached: true, serial: 1, lastError: null, failures: 0 });
    expect(registry.served().map((b) => b.version)).toEqual(["1.0.0"]);

    expect(await remote.pollNow()).toEqual({ result: "unchanged" });
    expect(server.notModified).toBe(1);

    server.files = sourceFiles(
      {
        serial: 2,
        archives: new Map([
          ["1.0.0", v1],
          ["1.1.0", transferArchive("1.1.0", signer.key, 5_000)],
        ]),
      },
      signer.key,
    );
    expect(await remote.pollNow()).toEqual({ result: "installed" });
    expect(registry.served().map((b) => b.version)).toEqual(["1.0.0", "1.1.0"]);
    // 1.0.0 was served already with the same bundle_hash: its archive was fetched once in all.
    expect(server.requests.filter((p) => p.endsWith("conformance.transfer@1.0.0.bundle.json"))).toHaveLength(1);
  });

  it("resolves an alias to the version it names, and moves it with the next set", async () => {
    const v1 = transferArchive("1.0.0", signer.key);
    const v2 = transferArchive("1.1.0", signer.key, 5_000);
    server.files = sourceFiles(
      {
        serial: 1,
        archives: new Map([
          ["1.0.0", v1],
          ["1.1.0", v2],
        ]),
        aliases: [{ policyId: POLICY_ID, alias: "stable", version: "1.0.0" }],
      },
      signer.key,
    );
    const { registry, source: remote } = source();
    await remote.start();
    expect((await registry.get(POLICY_ID, "stable")).manifest.version).toBe("1.0.0");
    server.files = sourceFiles(
      {
        serial: 2,
        archives: new Map([
          ["1.0.0", v1],
          ["1.1.0", v2],
        ]),
        aliases: [{ policyId: POLICY_ID, alias: "stable", version: "1.1.0" }],
      },
      signer.key,
    );
    await remote.pollNow();
    expect((await registry.get(POLICY_ID, "stable")).manifest.version).toBe("1.1.0");
    await expect(registry.get(POLICY_ID, "beta")).rejects.toMatchObject({ code: "BUNDLE_NOT_FOUND" });
  });

  describe("refuses a set whole and keeps serving the one before", () => {
    const v1 = () => transferArchive("1.0.0", signer.key);
    const refusals: [string, () => Promise<Map<string, Uint8Array>>, RegExp][] = [
      [
        "a corrupted archive",
        async () => {
          const files = sourceFiles(
            {
              serial: 6,
              archives: new Map([
                ["1.0.0", v1()],
                ["1.1.0", transferArchive("1.1.0", signer.key, 5_000)],
              ]),
            },
            signer.key,
          );
          const name = "conformance.transfer@1.1.0.bundle.json";
          files.set(name, Buffer.from(Buffer.from(files.get(name)!).toString("utf8").replace("large transfer", "LARGE transfer")));
          return files;
        },
        /does not match its hash|bundle_hash/,
      ],
      [
        "an unsigned archive",
        async () =>
          sourceFiles(
            {
              serial: 6,
              archives: new Map([
                ["1.0.0", v1()],
                ["1.1.0", transferArchive("1.1.0", null)],
              ]),
            },
            signer.key,
          ),
        /not signed/,
      ],
      [
        "a rolled-back index (a lower serial)",
        async () => sourceFiles({ serial: 4, archives: new Map([["1.0.0", v1()]]) }, signer.key),
        /serial 4, which is older than serial 5.*rollback/,
      ],
      [
        "an index republished under its serial with other content",
        async () => sourceFiles({ serial: 5, archives: new Map([["1.0.0", v1()]]) }, signer.key),
        /serial 5, which was served before with other content/,
      ],
      [
        "a version whose bytes changed (same version, other rules)",
        async () => sourceFiles({ serial: 6, archives: new Map([["1.0.0", transferArchive("1.0.0", signer.key, 99)]]) }, signer.key),
        /a version is immutable/,
      ],
      [
        "an index signed by an unknown key",
        async () => sourceFiles({ serial: 6, archives: new Map([["1.0.0", v1()]]) }, (await bundleKey()).key),
        /does not verify/,
      ],
      [
        "an expired index",
        async () =>
          sourceFiles(
            { serial: 6, archives: new Map([["1.0.0", v1()]]), issuedAt: "2019-12-01T00:00:00Z", expiresAt: "2020-01-01T00:00:00Z" },
            signer.key,
          ),
        /expired/,
      ],
    ];
    it.each(refusals)("%s", async (_name, files, why) => {
      server.files = sourceFiles({ serial: 5, archives: new Map([["1.0.0", v1()]]) }, signer.key);
      const { registry, source: remote } = source();
      await remote.start();
      const first = await hashOf(registry, "1.0.0");

      server.files = await files();
      const outcome = await remote.pollNow();
      expect(outcome.result).toBe("refused");
      expect(outcome.message).toMatch(why);
      expect(remote.status()).toMatchObject({ reached: true, serial: 5, failures: 1 });
      expect(registry.served().map((b) => b.version)).toEqual(["1.0.0"]);
      expect(await hashOf(registry, "1.0.0")).toBe(first);
      // Refused once: the same index is not fetched and refused again until it changes; the refusal stays reported.
      expect(await remote.pollNow()).toEqual({ result: "unchanged" });
      expect(remote.status()).toMatchObject({ failures: 0, lastError: expect.stringMatching(why) });
    });
  });

  it("keeps serving while the source is slow or gone, and picks up the next set when it returns", async () => {
    const v1 = transferArchive("1.0.0", signer.key);
    server.files = sourceFiles({ serial: 1, archives: new Map([["1.0.0", v1]]) }, signer.key);
    const { registry, source: remote } = source();
    await remote.start();

    server.delayMs = 1_500;
    expect(await remote.pollNow()).toMatchObject({
      result: "unreachable",
      message: expect.stringMatching(/did not answer within 1000 ms/),
    });
    server.delayMs = 0;
    await server.stop();
    expect(await remote.pollNow()).toMatchObject({ result: "unreachable" });
    expect(remote.status()).toMatchObject({ serial: 1, failures: 2 });
    expect(registry.served().map((b) => b.version)).toEqual(["1.0.0"]);
    // The URL's path may be logged; a query (a signed URL's secret) never is.
    expect(messages.join("\n")).not.toContain("?");

    server.files = sourceFiles(
      {
        serial: 2,
        archives: new Map([
          ["1.0.0", v1],
          ["1.1.0", transferArchive("1.1.0", signer.key, 5_000)],
        ]),
      },
      signer.key,
    );
    await server.restart();
    expect(await remote.pollNow()).toEqual({ result: "installed" });
    expect(remote.status()).toMatchObject({ serial: 2, failures: 0, lastError: null });
  });

  it("a restart without the network serves the last good set from disk, and still refuses a rollback", async () => {
    const v1 = transferArchive("1.0.0", signer.key);
    const v2 = transferArchive("1.1.0", signer.key, 5_000);
    server.files = sourceFiles(
      {
        serial: 3,
        archives: new Map([
          ["1.0.0", v1],
          ["1.1.0", v2],
        ]),
      },
      signer.key,
    );
    const first = source();
    await first.source.start();
    const served = first.registry.served();
    await first.source.close();
    await server.stop();

    const second = source();
    await second.source.start();
    expect(second.source.status()).toMatchObject({ reached: false, serial: 3 });
    expect(second.registry.served()).toEqual(served);

    server.files = sourceFiles({ serial: 2, archives: new Map([["1.0.0", v1]]) }, signer.key);
    await server.restart();
    expect(await second.source.pollNow()).toMatchObject({ result: "refused", message: expect.stringMatching(/rollback/) });
    expect(second.registry.served()).toEqual(served);
  });
});
