/**
 * The data dir on disk is owner-only in every mode, not only `--dev` (docs/sidecar.md, "Files on disk"): a sidecar
 * started on a fresh data dir, with a remote bundle source so that its cache is written too, leaves every directory
 * in it 0700 and every file 0600; an existing data dir other users may read is named in a notice and left as it is.
 */
import { chmod, mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BundleServer, bundleKey, sourceFiles, transferArchive, type BundleKey } from "../support/bundle-source.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.js";

let signer: BundleKey;
let server: BundleServer;
let previousUmask: number;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  // The usual umask: with 077 every file would be private whatever the sidecar asked for, and this test could not fail.
  previousUmask = process.umask(0o022);
  signer = await bundleKey();
  server = await BundleServer.start();
  server.files = sourceFiles({ serial: 1, archives: new Map([["1.0.0", transferArchive("1.0.0", signer.key)]]) }, signer.key);
});

afterAll(async () => {
  process.umask(previousUmask);
  await server.stop();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "writ-data-dir-modes-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function start(dataDir: string, env: Record<string, string> = {}): Promise<TestSidecar> {
  const sidecar = await startTestSidecar(
    { SERVICE_POLICIES_ROOT: undefined, SERVICE_BUNDLE_SOURCE_URL: server.url, SERVICE_BUNDLE_KEYS: signer.publicKeyFile, ...env },
    { dataDir },
  );
  cleanups.push(() => sidecar.stop());
  // Ready once the source's set is verified and kept in the cache.
  const deadline = Date.now() + 5_000;
  while ((await fetch(`${sidecar.url}/health?probe=ready`)).status !== 200) {
    expect(Date.now()).toBeLessThan(deadline);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return sidecar;
}

/** Every entry under `dir` (itself as "."), with its permission bits. */
async function modes(dir: string): Promise<Record<string, string>> {
  const found: Record<string, string> = { ".": ((await stat(dir)).mode & 0o777).toString(8) };
  for (const entry of await readdir(dir, { recursive: true })) {
    found[entry] = ((await stat(join(dir, entry))).mode & 0o777).toString(8);
  }
  return found;
}

describe("the data dir", () => {
  it.each([
    ["holding the signing key", false],
    ["without the signing key, so that LMDB's open is the first to need the dir", true],
  ])("is created owner-only, %s, with every file in it", async (_, keyElsewhere) => {
    const parent = await tempDir();
    const dataDir = join(parent, "data");
    const s = await start(dataDir, keyElsewhere ? { SERVICE_SIGNING_KEY_FILE: join(parent, "signing.key") } : {});
    // A decision, so the replay store and the audit trail have written.
    const answer = await s.call("POST", "/evaluate", {
      executionId: "modes-1",
      policyId: "conformance.transfer",
      policyVersion: "1.0.0",
      verifiedSignals: TRANSFER_SIGNALS.approved,
    });
    expect(answer.status).toBe(200);
    await s.stop();

    const found = await modes(dataDir);
    const expected = [
      "data.mdb",
      "lock.mdb",
      "bundle-source",
      "bundle-source/index.json",
      "bundle-source/archives",
      ...(keyElsewhere ? [] : ["signing.key"]),
    ];
    for (const entry of expected) expect(Object.keys(found)).toContain(entry);
    const directories = new Set([".", "bundle-source", "bundle-source/archives"]);
    const wrong = Object.entries(found).filter(([entry, mode]) => mode !== (directories.has(entry) ? "700" : "600"));
    expect(wrong).toEqual([]);
    expect(s.sidecar.context.notices.filter((n) => n.includes("open to other users"))).toEqual([]);
  });

  it("already there and readable by others: named in a notice with the fix, and left as it is", async () => {
    const dataDir = join(await tempDir(), "data");
    await mkdir(dataDir);
    await chmod(dataDir, 0o755);
    const s = await start(dataDir);
    const notices = s.sidecar.context.notices.filter((n) => n.includes("open to other users"));
    expect(notices).toEqual([
      `the data dir is open to other users: ${dataDir} (mode 755); run \`chmod -R go= ${dataDir}\` to make it owner-only`,
    ]);
    expect(((await stat(dataDir)).mode & 0o777).toString(8)).toBe("755");
    // What the sidecar creates in it is owner-only all the same.
    const created = await modes(dataDir);
    expect([created["data.mdb"], created["lock.mdb"], created["bundle-source"]]).toEqual(["600", "600", "700"]);
  });
});
