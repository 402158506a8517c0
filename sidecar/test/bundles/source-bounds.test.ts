/**
 * What a remote bundle source can make the sidecar say (docs/bundles.md, "A remote source"): a source that sends huge
 * names (a 3 MB member name in `index.json`, which needs no key since it is refused before the signature is checked;
 * a 15 MB file name in an archive) is refused with a short reason, so `/health` (unauthenticated), `GET
 * /admin/bundles` and every log line stay small; and a signed index whose serial leaves no room above it is refused,
 * so the source can still publish after it.
 */
import { mkdtemp } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  INDEX_FILE,
  MAX_MESSAGE_CHARACTERS,
  MAX_SERIAL,
  PAYLOAD_TYPES,
  PolicyRegistry,
  archiveFileName,
  canonicalBytes,
  loadPublicKeyPem,
  signObject,
  type PublicKey,
} from "@writ/runtime";
import { createLogger } from "@writ/sidecar";
import type { BundleSourceConfig } from "../../src/bundles/remote-source.js";
import { RemoteBundleSource } from "../../src/bundles/remote-source.js";
import { BundleServer, POLICY_ID, bundleKey, sourceFiles, transferArchive, type BundleKey } from "../support/bundle-source.js";
import { startE2eSidecar, type E2eSidecar } from "../support/e2e.js";

/** The most a reported reason may have: MAX_MESSAGE_CHARACTERS and the `… (N characters)` of a clipped one. */
const MAX_REASON = MAX_MESSAGE_CHARACTERS + 40;
const MB = 1024 * 1024;
const utf8 = new TextEncoder();

let server: BundleServer;
let signer: BundleKey;
let keys: PublicKey[];
let config: BundleSourceConfig;
const sources: RemoteBundleSource[] = [];
const messages: string[] = [];
const log = { info: (m: string) => messages.push(m), warn: (m: string) => messages.push(m), error: (m: string) => messages.push(m) };

beforeEach(async () => {
  server = await BundleServer.start();
  signer = await bundleKey();
  keys = [loadPublicKeyPem(readFileSync(signer.publicKeyFile, "utf8"))];
  config = {
    url: server.url,
    pollIntervalMs: 60_000,
    fetchTimeoutMs: 5_000,
    cacheDir: join(await mkdtemp(join(tmpdir(), "writ-source-bounds-")), "cache"),
  };
  messages.length = 0;
});

afterEach(async () => {
  await Promise.all(sources.splice(0).map((s) => s.close()));
  await server.stop().catch(() => undefined);
});

function source(): { registry: PolicyRegistry; remote: RemoteBundleSource } {
  const registry = new PolicyRegistry("/nonexistent");
  const remote = new RemoteBundleSource(config, registry, keys, log);
  sources.push(remote);
  return { registry, remote };
}

/** An `index.json` with a member named by `megabytes` MB of `m`: refused before its signature is looked at. */
function indexWithHugeMemberName(megabytes: number): Uint8Array {
  return utf8.encode(JSON.stringify({ index: {}, signature: {}, ["m".repeat(megabytes * MB)]: 1 }));
}

/** The source's files for a signed set listing 1.0.0 and 1.1.0, where 1.1.0's archive holds a file named by 15 MB. */
function archiveWithHugeFileName(serial: number): Map<string, Uint8Array> {
  const files = sourceFiles(
    {
      serial,
      archives: new Map([
        ["1.0.0", transferArchive("1.0.0", signer.key)],
        ["1.1.0", transferArchive("1.1.0", signer.key, 5_000)],
      ]),
    },
    signer.key,
  );
  const name = archiveFileName(POLICY_ID, "1.1.0");
  const archive = JSON.parse(Buffer.from(files.get(name)!).toString("utf8")) as { files: Record<string, string> };
  archive.files["f".repeat(15 * MB)] = "";
  files.set(name, utf8.encode(JSON.stringify(archive)));
  return files;
}

/** index.json signed with `signer` over `index` as given: what a signer without writ's own checks could publish. */
function handSignedIndex(index: object): Uint8Array {
  const signature = {
    payloadType: PAYLOAD_TYPES.bundleIndex,
    keyId: signer.key.keyId,
    signature: signObject(PAYLOAD_TYPES.bundleIndex, index, signer.key),
  };
  return canonicalBytes({ index, signature });
}

describe("a source sending huge names is refused with a short reason", () => {
  it("a 3 MB member name in index.json", async () => {
    server.files = new Map([[INDEX_FILE, indexWithHugeMemberName(3)]]);
    const { remote } = source();
    await remote.start();
    const status = remote.status();
    expect(status).toMatchObject({ reached: true, serial: null, failures: 1, lastError: expect.stringContaining("(3145728 characters)") });
    expect(status.lastError!.length).toBeLessThanOrEqual(MAX_REASON);
    expect(messages.length).toBeGreaterThan(0);
    for (const message of messages) expect(message.length).toBeLessThanOrEqual(MAX_REASON + 100);
  });

  it("a 15 MB file name in an archive the signed index lists", async () => {
    server.files = sourceFiles({ serial: 1, archives: new Map([["1.0.0", transferArchive("1.0.0", signer.key)]]) }, signer.key);
    const { registry, remote } = source();
    await remote.start();
    server.files = archiveWithHugeFileName(2);
    const outcome = await remote.pollNow();
    expect(outcome).toMatchObject({ result: "refused", message: expect.stringContaining("(15728640 characters)") });
    expect(outcome.message!.length).toBeLessThanOrEqual(MAX_REASON);
    expect(remote.status()).toMatchObject({ serial: 1, lastError: outcome.message });
    expect(registry.served().map((b) => b.version)).toEqual(["1.0.0"]);
    for (const message of messages) expect(message.length).toBeLessThanOrEqual(MAX_REASON + 100);
  });
});

describe("a serial at the top of its range", () => {
  it("is refused, with the bound in lastError, and the source can publish a set after it", async () => {
    const v1 = transferArchive("1.0.0", signer.key);
    const hash = (JSON.parse(Buffer.from(v1).toString("utf8")) as { bundle_hash: string }).bundle_hash;
    const top = {
      indexVersion: 1,
      serial: Number.MAX_SAFE_INTEGER,
      issuedAt: new Date().toISOString(),
      bundles: [{ policyId: POLICY_ID, version: "1.0.0", bundle_hash: hash }],
      aliases: [],
    };
    server.files = new Map([
      [INDEX_FILE, handSignedIndex(top)],
      [archiveFileName(POLICY_ID, "1.0.0"), v1],
    ]);
    const { registry, remote } = source();
    await remote.start();
    expect(remote.status()).toMatchObject({
      serial: null,
      lastError: `index has serial ${Number.MAX_SAFE_INTEGER}; a serial is at most ${MAX_SERIAL} (2^53 − 2^32), so that a later index can still have a higher one`,
    });
    expect(registry.served()).toEqual([]);

    // MAX_SERIAL itself is served, and leaves room: the source is not stuck.
    server.files = new Map([
      [INDEX_FILE, handSignedIndex({ ...top, serial: MAX_SERIAL - 1 })],
      [archiveFileName(POLICY_ID, "1.0.0"), v1],
    ]);
    expect(await remote.pollNow()).toEqual({ result: "installed" });
    server.files = new Map([
      [INDEX_FILE, handSignedIndex({ ...top, serial: MAX_SERIAL })],
      [archiveFileName(POLICY_ID, "1.0.0"), v1],
    ]);
    expect(await remote.pollNow()).toEqual({ result: "installed" });
    expect(remote.status()).toMatchObject({ serial: MAX_SERIAL, lastError: null });
  });
});

describe("on a sidecar: /health, /admin/bundles and the log stay small whatever the source sends", () => {
  let s: E2eSidecar | null = null;
  afterEach(async () => {
    await s?.close();
    s = null;
  });

  /** Polls `/health` until `done` says so (the sidecar polls the source every 100 ms). */
  async function healthUntil(
    done: (body: { bundles: { remote?: { serial: number | null; lastError: string | null } } }) => boolean,
  ): Promise<{ text: string }> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const answer = await s!.send<{ bundles: { remote?: { serial: number | null; lastError: string | null } } }>("GET", "/health");
      if (done(answer.body)) return answer;
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it("a 3 MB member name, then a 15 MB file name", async () => {
    const lines: string[] = [];
    const captured = createLogger("info", { write: (line: string) => void lines.push(line) });
    server.files = new Map([[INDEX_FILE, indexWithHugeMemberName(3)]]);
    s = await startE2eSidecar(
      {
        SERVICE_POLICIES_ROOT: undefined,
        SERVICE_BUNDLE_SOURCE_URL: server.url,
        SERVICE_BUNDLE_KEYS: signer.publicKeyFile,
        SERVICE_BUNDLE_POLL_INTERVAL_MS: "100",
      },
      { log: captured },
    );
    const refusedIndex = await healthUntil((b) => b.bundles.remote?.lastError?.includes("(3145728 characters)") === true);
    expect(refusedIndex.text.length).toBeLessThan(16 * 1024);

    server.files = sourceFiles({ serial: 1, archives: new Map([["1.0.0", transferArchive("1.0.0", signer.key)]]) }, signer.key);
    await healthUntil((b) => b.bundles.remote?.serial === 1);
    server.files = archiveWithHugeFileName(2);
    const refusedArchive = await healthUntil((b) => b.bundles.remote?.lastError?.includes("(15728640 characters)") === true);
    expect(refusedArchive.text.length).toBeLessThan(16 * 1024);
    expect((await s.call("GET", "/admin/bundles")).text.length).toBeLessThan(16 * 1024);

    const refusals = lines.filter((line) => line.includes("bundle source refused"));
    expect(refusals.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line.length).toBeLessThan(4 * 1024);
  });
});
