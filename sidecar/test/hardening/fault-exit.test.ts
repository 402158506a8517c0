/**
 * A fault the sidecar cannot reason about (an uncaught exception or unhandled rejection that is not a failed LMDB
 * commit) ends the process cleanly: it says why, shuts down, exits with code 1 and frees its port; it never hangs
 * holding it. The fault is injected into the BUILT sidecar from outside, by a module preloaded with NODE_OPTIONS, so the
 * product carries no test hook.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertSidecarBuilt, killAllBuiltSidecars, logLines, startBuiltSidecar } from "../support/built-sidecar.js";
import { fixturePoliciesRoot } from "../support/policies.js";

const API_KEY = "fault-exit-api-key-0123456789abcdef";

/** Resolves true when `port` can be bound again on 127.0.0.1. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

describe("a fault in the sidecar process (built sidecar)", () => {
  let dir: string;
  let policiesRoot: string;

  beforeAll(async () => {
    assertSidecarBuilt();
    policiesRoot = await fixturePoliciesRoot();
    dir = await mkdtemp(join(tmpdir(), "writ-fault-exit-"));
  });
  afterAll(async () => {
    await killAllBuiltSidecars();
    await rm(dir, { recursive: true, force: true });
  });

  for (const [kind, fault] of [
    ["unhandled rejection", "void Promise.reject(new Error('injected fault'));"],
    ["uncaught exception", "throw new Error('injected fault');"],
  ] as const) {
    it(`${kind}: says why, shuts down and exits with code 1, freeing its port`, async () => {
      const preload = join(dir, `${kind.replace(" ", "-")}.mjs`);
      // The fault happens on a timer of its own once the test, having seen the sidecar listen, sends SIGUSR2: a fixed
      // delay from the start would fire before the sidecar listens on a busy machine.
      await writeFile(preload, `process.once("SIGUSR2", () => setTimeout(() => { ${fault} }, 0));\n`);
      const sidecar = await startBuiltSidecar({
        SERVICE_API_KEY: API_KEY,
        SERVICE_DATA_DIR: join(dir, `data-${kind.replace(" ", "-")}`),
        SERVICE_POLICIES_ROOT: policiesRoot,
        SERVICE_PORT: "0",
        SERVICE_B_PORT: "off",
        NODE_OPTIONS: `--import ${preload}`,
      });
      const port = Number(new URL(sidecar.url).port);
      sidecar.child.kill("SIGUSR2");
      const exit = await Promise.race([sidecar.closed, new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000))]);
      expect(exit, `the sidecar did not exit within 20 s:\n${sidecar.output()}`).not.toBeNull();
      expect(exit).toEqual({ code: 1, signal: null });
      expect(logLines(sidecar.output())).toContainEqual(
        expect.objectContaining({
          level: "fatal",
          msg: `${kind}: shutting down`,
          err: expect.objectContaining({ message: "injected fault" }),
        }),
      );
      expect(await portIsFree(port)).toBe(true);
    });
  }
});
