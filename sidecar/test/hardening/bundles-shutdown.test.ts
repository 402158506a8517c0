/**
 * A bundle file that would block a read never hangs the sidecar, nor its shutdown:
 * - the BUILT sidecar, with a FIFO in place of `bundle.sig`: the request is refused at once with the reason in the
 *   log, the bundle is served as soon as the FIFO is gone (no restart), and SIGTERM ends the process with code 0.
 *   Before, the request never got an answer, the version stayed hung after the fix, and the process never exited
 *   (the FIFO's open held a libuv thread).
 * - a sidecar closing while a bundle load is under way (every read held, as behind a hung disk): the request in flight
 *   is answered at once and shutdown completes, instead of waiting for the load or the shutdown timeout.
 */
import { cp, mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdThreadPool, mkfifo, within } from "../../../runtime/test/bundle/stuck-reads.js";
import { KeepAliveClient, assertSidecarBuilt, killAllBuiltSidecars, logLines, startBuiltSidecar } from "../support/built-sidecar.js";
import { TRANSFER } from "../support/e2e.js";
import { TRANSFER_SIGNALS, fixturePoliciesRoot } from "../support/policies.js";
import { startTestSidecar } from "../support/sidecar.js";

const DRY_RUN = { ...TRANSFER, signals: TRANSFER_SIGNALS.approved };

let dir: string;
let policies: string;
let sig: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "writ-bundles-shutdown-"));
  policies = join(dir, "policies");
  await cp(await fixturePoliciesRoot(), policies, { recursive: true });
  sig = join(policies, TRANSFER.policyId, TRANSFER.policyVersion, "bundle.sig");
});
afterAll(async () => {
  await killAllBuiltSidecars();
  await rm(dir, { recursive: true, force: true });
});

describe("a FIFO in a bundle (built sidecar)", () => {
  it("is refused at once and logged; the fixed bundle is served without a restart; SIGTERM exits with 0", async () => {
    assertSidecarBuilt();
    mkfifo(sig);
    const sidecar = await startBuiltSidecar({
      SERVICE_API_KEY: "bundles-shutdown-api-key-0123456789",
      SERVICE_DATA_DIR: join(dir, "data"),
      SERVICE_POLICIES_ROOT: policies,
      SERVICE_PORT: "0",
      SERVICE_B_PORT: "off",
      SERVICE_LOG_LEVEL: "warn",
    });
    const client = new KeepAliveClient(sidecar.url, "bundles-shutdown-api-key-0123456789", 1);
    try {
      const refused = await within(5_000, "the dry run with a FIFO as bundle.sig", client.json("POST", "/evaluate", DRY_RUN));
      expect(refused).toEqual({ status: 422, body: { error: "policy bundle does not load" } });
      // The line reaches this process through the child's stdout pipe, which may deliver it after the answer.
      await expect
        .poll(() => logLines(sidecar.output()), { timeout: 5_000 })
        .toContainEqual(
          expect.objectContaining({
            level: "warn",
            msg: "policy bundle does not load",
            policyId: TRANSFER.policyId,
            policyVersion: TRANSFER.policyVersion,
            reason: `bundle ${TRANSFER.policyId}@${TRANSFER.policyVersion} does not load: \`bundle.sig\` is not a regular file (a FIFO)`,
          }),
        );

      await rm(sig);
      const served = await within(5_000, "the dry run once the FIFO is gone", client.json("POST", "/evaluate", DRY_RUN));
      expect(served).toMatchObject({ status: 200, body: { wouldDecide: "approved" } });
    } finally {
      client.close();
    }
    sidecar.child.kill("SIGTERM");
    const exit = await within(10_000, "the sidecar's exit after SIGTERM", sidecar.closed);
    expect(exit, sidecar.output()).toEqual({ code: 0, signal: null });
  });
});

describe("shutdown while a bundle load is under way", () => {
  it("answers the request in flight at once and completes, without waiting for the load", async () => {
    // Load and shutdown timeouts far above what the test allows: only abandoning the load can pass it.
    // Absent at start, so the preflight does not load it: the request below makes the first load.
    const bundle = join(policies, TRANSFER.policyId, TRANSFER.policyVersion);
    await rename(bundle, `${bundle}-aside`);
    const sidecar = await startTestSidecar({
      SERVICE_POLICIES_ROOT: policies,
      SERVICE_BUNDLE_LOAD_TIMEOUT_MS: "60000",
      SERVICE_SHUTDOWN_TIMEOUT_MS: "60000",
    });
    await rename(`${bundle}-aside`, bundle);
    const release = await holdThreadPool(dir);
    let released = false;
    try {
      const inFlight = sidecar.call("POST", "/evaluate", DRY_RUN);
      // The request is in, its load waiting on the held reads.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = Date.now();
      const closing = sidecar.sidecar.close();
      const answer = await within(2_000, "the request in flight during shutdown", inFlight);
      expect(answer).toMatchObject({ status: 422, body: { error: "policy bundle does not load" } });
      // Closing the data dir needs the file system again.
      await release();
      released = true;
      await within(5_000, "the shutdown", closing);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      if (!released) await release();
      await rm(sidecar.dataDir, { recursive: true, force: true });
    }
  });
});
