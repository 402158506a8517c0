/**
 * Reload, immutable versions and readiness on a policies root, on a real sidecar:
 * archives in the root are served like bundle directories; `POST /admin/reload` picks up a new version and new
 * bundle keys, and refuses (changing nothing) a version whose bytes changed, an unsigned bundle, or keys that no
 * longer verify what is served; `GET /health?probe=ready` is 503 while no bundle verifies.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { archiveFileName } from "@writ/runtime";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { API_KEY, startTestSidecar, type TestSidecar } from "../support/sidecar.js";
import { BundleServer, POLICY_ID, bundleKey, sourceFiles, transferArchive, type BundleKey } from "../support/bundle-source.js";

const REPO = new URL("../../../", import.meta.url).pathname;
const CLI = join(REPO, "compiler/dist/cli.js");
const TRANSFER_SOURCE = join(REPO, "conformance/fixtures/policies/conformance.transfer/1.0.0/policy.writ");

let root: string;
let signer: BundleKey;
let sidecar: TestSidecar | null = null;

const put = (version: string, bytes: Uint8Array) => writeFile(join(root, archiveFileName(POLICY_ID, version)), bytes);
const start = async () => {
  sidecar = await startTestSidecar({ SERVICE_POLICIES_ROOT: root, SERVICE_BUNDLE_KEYS: signer.publicKeyFile });
  return sidecar;
};
const evaluate = (s: TestSidecar, version: string) =>
  s.call("POST", "/evaluate", {
    executionId: randomUUID(),
    policyId: POLICY_ID,
    policyVersion: version,
    verifiedSignals: TRANSFER_SIGNALS.pending,
  });

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "writ-reload-policies-"));
  signer = await bundleKey();
});
afterEach(async () => {
  await sidecar?.close();
  sidecar = null;
  await rm(root, { recursive: true, force: true });
});

describe("reload (POST /admin/reload)", () => {
  it("serves an archive in the policies root, and a new version after a reload, without a restart", async () => {
    await put("1.0.0", transferArchive("1.0.0", signer.key));
    const s = await start();
    expect((await evaluate(s, "1.0.0")).body).toMatchObject({ status: "pending_override" });

    await put("1.1.0", transferArchive("1.1.0", signer.key, 50_000));
    const reload = await s.call("POST", "/admin/reload");
    expect(reload).toMatchObject({ status: 200, body: { ok: true, served: 2, refused: [] } });
    expect((await evaluate(s, "1.1.0")).body).toMatchObject({ status: "approved", attestation: { policyVersion: "1.1.0" } });
  });

  it("refuses a version whose bytes changed, keeps serving the first, and reports the conflict", async () => {
    await put("1.0.0", transferArchive("1.0.0", signer.key));
    const s = await start();
    const first = (await s.call("GET", `/policies/${POLICY_ID}/versions/1.0.0/schema`)).body.bundleHash as string;

    // Recompiled with other rules and forced onto disk under the same version.
    await put("1.0.0", transferArchive("1.0.0", signer.key, 50_000));
    const reload = await s.call("POST", "/admin/reload");
    expect(reload.status).toBe(409);
    expect(reload.body).toMatchObject({ error: "reload refused: nothing changed", ok: false, served: 1 });
    expect(reload.body.refused).toEqual([
      { bundle: `${POLICY_ID}@1.0.0`, code: "BUNDLE_VERSION_CONFLICT", message: expect.stringContaining("a version is immutable") },
    ]);

    expect((await s.call("GET", `/policies/${POLICY_ID}/versions/1.0.0/schema`)).body.bundleHash).toBe(first);
    expect((await evaluate(s, "1.0.0")).body).toMatchObject({ status: "pending_override" });
    expect((await s.call("GET", "/health", undefined)).body.bundles).toMatchObject({ ready: true, conflicts: 1 });
    const detail = (await s.call("GET", "/admin/bundles")).body;
    expect(detail.recentConflicts).toEqual([expect.objectContaining({ policyId: POLICY_ID, version: "1.0.0", servedHash: first })]);
    const metrics = (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${API_KEY}` } }).then((r) => r.text())).split(
      "\n",
    );
    expect(metrics).toEqual(
      expect.arrayContaining(["writ_bundle_version_conflicts_total 1", "writ_bundles_served 1", "writ_bundles_ready 1"]),
    );
  });

  it("keeps the pin across a restart: a version whose bytes changed while it was down is refused at start", async () => {
    await put("1.0.0", transferArchive("1.0.0", signer.key));
    const first = await start();
    expect((await evaluate(first, "1.0.0")).body).toMatchObject({ status: "pending_override" });
    await first.stop();

    await put("1.0.0", transferArchive("1.0.0", signer.key, 50_000));
    const again = await startTestSidecar(
      { SERVICE_POLICIES_ROOT: root, SERVICE_BUNDLE_KEYS: signer.publicKeyFile },
      { dataDir: first.dataDir },
    );
    sidecar = again;
    expect(again.sidecar.context.notices).toContainEqual(
      expect.stringMatching(/^bundle `conformance\.transfer@1\.0\.0` refused \(BUNDLE_VERSION_CONFLICT\)/),
    );
    expect((await evaluate(again, "1.0.0")).status).toBe(500);

    await put("1.0.0", transferArchive("1.0.0", signer.key));
    expect((await evaluate(again, "1.0.0")).body).toMatchObject({ status: "pending_override" });
  });

  it("refuses a reload with an unsigned bundle, or with keys that no longer verify what is served", async () => {
    await put("1.0.0", transferArchive("1.0.0", signer.key));
    const s = await start();
    await put("1.1.0", transferArchive("1.1.0", null));
    const unsigned = await s.call("POST", "/admin/reload");
    expect(unsigned.status).toBe(409);
    expect(unsigned.body.refused).toEqual([expect.objectContaining({ bundle: `${POLICY_ID}@1.1.0`, code: "BUNDLE_UNSIGNED" })]);
    expect((await evaluate(s, "1.1.0")).status).toBe(500);
    await rm(join(root, archiveFileName(POLICY_ID, "1.1.0")));

    // The key file now holds another key: what is served no longer verifies, so nothing changes.
    await copyFile((await bundleKey()).publicKeyFile, signer.publicKeyFile);
    const rotated = await s.call("POST", "/admin/reload");
    expect(rotated.status).toBe(409);
    expect(rotated.body.refused).toEqual([expect.objectContaining({ code: "BUNDLE_SIGNATURE_INVALID" })]);
    expect((await evaluate(s, "1.0.0")).status).toBe(200);
  });

  it("needs the API key", async () => {
    await put("1.0.0", transferArchive("1.0.0", signer.key));
    const s = await start();
    expect((await fetch(`${s.url}/admin/reload`, { method: "POST" })).status).toBe(401);
    expect((await fetch(`${s.url}/admin/bundles`)).status).toBe(401);
  });
});

describe("the compiler and a running sidecar on one policies root", () => {
  it("recompiling a version with changed rules fails (exit 3, one line); forced onto disk, the sidecar refuses it and serves the first bytes", async () => {
    const writ = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: root, encoding: "utf8" });
    const dir = join(root, POLICY_ID, "1.0.0");
    await mkdir(dir, { recursive: true });
    await copyFile(TRANSFER_SOURCE, join(dir, "policy.writ"));
    expect(writ("keygen", "--out", "release").status).toBe(0);
    expect(writ("compile", ".", "--out", ".", "--sign-key", "release.key").status).toBe(0);
    const s = await startTestSidecar({ SERVICE_POLICIES_ROOT: root, SERVICE_BUNDLE_KEYS: join(root, "release.pub") });
    sidecar = s;
    expect((await evaluate(s, "1.0.0")).body).toMatchObject({ status: "pending_override" });

    await writeFile(
      join(dir, "policy.writ"),
      (await readFile(join(dir, "policy.writ"), "utf8")).replace("amount > 10000", "amount > 50000"),
    );
    const refused = writ("compile", ".", "--out", ".", "--sign-key", "release.key");
    expect(refused.status).toBe(3);
    // One error line (beside the policy's own warnings and the summary).
    expect(refused.stderr.split("\n").filter((line) => line.startsWith("error"))).toEqual([
      expect.stringMatching(
        /^error: `conformance\.transfer@1\.0\.0` already exists in `\.` with a different bundle_hash .*a version is immutable/,
      ),
    ]);
    const forced = writ("compile", ".", "--out", ".", "--sign-key", "release.key", "--force");
    expect(forced.status).toBe(0);
    expect(forced.stderr).toMatch(/^warning: --force: overwriting `conformance\.transfer@1\.0\.0`/m);

    expect((await s.call("POST", "/admin/reload")).body.refused).toEqual([
      expect.objectContaining({ bundle: `${POLICY_ID}@1.0.0`, code: "BUNDLE_VERSION_CONFLICT" }),
    ]);
    expect((await evaluate(s, "1.0.0")).body).toMatchObject({ status: "pending_override" });
  });
});

describe("readiness (GET /health?probe=ready)", () => {
  it("is 503 while no bundle verifies, and 200 once one does; plain /health stays 200", async () => {
    const s = await start();
    const notReady = await fetch(`${s.url}/health?probe=ready`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toMatchObject({
      status: "ok",
      ready: false,
      bundles: { ready: false, problem: "no bundle verifies", served: 0 },
    });
    expect((await fetch(`${s.url}/health`)).status).toBe(200);

    await put("1.0.0", transferArchive("1.0.0", signer.key));
    expect((await s.call("POST", "/admin/reload")).status).toBe(200);
    const ready = await fetch(`${s.url}/health?probe=ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, bundles: { ready: true, served: 1 } });
  });

  it("is 503 when the policies root goes missing", async () => {
    await put("1.0.0", transferArchive("1.0.0", signer.key));
    const s = await start();
    expect((await fetch(`${s.url}/health?probe=ready`)).status).toBe(200);
    await rm(root, { recursive: true });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const missing = await fetch(`${s.url}/health?probe=ready`);
    expect(missing.status).toBe(503);
    expect(await missing.json()).toMatchObject({ bundles: { ready: false, problem: "the policies root is missing" } });
  });

  it("with a remote source: 503 until the source has been reached and a set verifies", async () => {
    const server = await BundleServer.start();
    await server.stop();
    try {
      const s = await startTestSidecar({
        // Unset: bundles come from the source alone.
        SERVICE_POLICIES_ROOT: undefined,
        SERVICE_BUNDLE_SOURCE_URL: server.url,
        SERVICE_BUNDLE_KEYS: signer.publicKeyFile,
        SERVICE_BUNDLE_POLL_INTERVAL_MS: "200",
      });
      sidecar = s;
      const notReady = await fetch(`${s.url}/health?probe=ready`);
      expect(notReady.status).toBe(503);
      expect(await notReady.json()).toMatchObject({
        bundles: {
          ready: false,
          source: "remote",
          problem: "the bundle source has not been reached",
          remote: { reached: false, serial: null },
        },
      });

      server.files = sourceFiles({ serial: 1, archives: new Map([["1.0.0", transferArchive("1.0.0", signer.key)]]) }, signer.key);
      await server.restart();
      const deadline = Date.now() + 5_000;
      while ((await fetch(`${s.url}/health?probe=ready`)).status !== 200) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect((await evaluate(s, "1.0.0")).body).toMatchObject({ status: "pending_override" });
    } finally {
      await server.stop().catch(() => undefined);
    }
  });

  it("refuses an unknown probe with 400", async () => {
    const s = await start();
    expect((await fetch(`${s.url}/health?probe=live`)).status).toBe(400);
  });
});
