/**
 * SIGHUP reloads the bundles of the BUILT sidecar: before, it killed the process. A new version
 * is served after it; a version whose bytes changed is refused with one log line naming it, and the process goes on
 * serving the first bytes.
 */
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { archiveFileName } from "@writ/runtime";
import { API_KEY } from "../durability/load.js";
import { KeepAliveClient, killAllBuiltSidecars, logLines, startBuiltSidecar } from "../support/built-sidecar.js";
import { POLICY_ID, bundleKey, transferArchive } from "../support/bundle-source.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";

const dirs: string[] = [];
afterAll(async () => {
  await killAllBuiltSidecars();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function until(ms: number, what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms`);
    await sleep(20);
  }
}

describe("SIGHUP (built sidecar)", () => {
  it("reloads: a new version is served, a changed version is refused in one line, and the process lives on", async () => {
    const root = await mkdtemp(join(tmpdir(), "writ-sighup-"));
    dirs.push(root);
    const signer = await bundleKey();
    const put = (version: string, bytes: Uint8Array) => writeFile(join(root, "policies", archiveFileName(POLICY_ID, version)), bytes);
    await mkdir(join(root, "policies"));
    await put("1.0.0", transferArchive("1.0.0", signer.key));
    const sidecar = await startBuiltSidecar({
      SERVICE_API_KEY: API_KEY,
      SERVICE_DATA_DIR: join(root, "data"),
      SERVICE_POLICIES_ROOT: join(root, "policies"),
      SERVICE_BUNDLE_KEYS: signer.publicKeyFile,
      SERVICE_PORT: "0",
      SERVICE_B_PORT: "off",
      SERVICE_LOG_LEVEL: "warn",
    });
    const client = new KeepAliveClient(sidecar.url, API_KEY, 1);
    const evaluate = async (version: string) =>
      (
        await client.json("POST", "/evaluate", {
          executionId: randomUUID(),
          policyId: POLICY_ID,
          policyVersion: version,
          verifiedSignals: TRANSFER_SIGNALS.pending,
        })
      ).body as { status: string };
    try {
      await put("1.1.0", transferArchive("1.1.0", signer.key, 50_000));
      sidecar.child.kill("SIGHUP");
      const line = (msg: string) => logLines(sidecar.output()).find((l) => l.msg === msg);
      await until(5_000, "the reload's line", () => line("SIGHUP: reloaded, 2 bundles served") !== undefined);
      expect(await evaluate("1.1.0")).toMatchObject({ status: "approved" });

      await put("1.0.0", transferArchive("1.0.0", signer.key, 50_000));
      sidecar.child.kill("SIGHUP");
      await until(5_000, "the refusal's line", () => line("SIGHUP: reload refused, nothing changed") !== undefined);
      expect(line("SIGHUP: reload refused, nothing changed")).toMatchObject({
        level: "error",
        refused: [expect.objectContaining({ bundle: "conformance.transfer@1.0.0", code: "BUNDLE_VERSION_CONFLICT" })],
      });
      expect(await evaluate("1.0.0")).toMatchObject({ status: "pending_override" });
      expect(sidecar.child.exitCode).toBeNull();
    } finally {
      client.close();
    }
  });
});
