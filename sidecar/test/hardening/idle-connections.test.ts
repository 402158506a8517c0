/**
 * Idle sockets (issue 12): 20,000 connections to the BUILT sidecar that send nothing, or one request and then
 * nothing, must not lock out a fresh client: `GET /health` on a new connection answers within a second, because at
 * the socket cap (SERVICE_MAX_SOCKETS) a newcomer evicts the oldest idle socket. And idle sockets do not stay open:
 * after SERVICE_IDLE_TIMEOUT_MS the server has closed them all. Before, about 21,000 idle sockets made both surfaces
 * unreachable, and 2,000 were all still open after 75 s.
 *
 * The sockets are held by two child processes of 10,000 each, so that neither the test's process nor a holder reaches
 * this machine's limit of 20,000 open files (a container may not raise it, even as root).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { assertSidecarBuilt, killAllBuiltSidecars, startBuiltSidecar } from "../support/built-sidecar.js";
import { parseRaw, rawRequest } from "../support/raw-http.js";
import { surfaceAEnv } from "../durability/load.js";

const IDLE_SOCKETS = 20_000;
const HOLDERS = 2;
const IDLE_TIMEOUT_MS = 6_000;
const SETTLE_MS = 2_500;
const HOLDER = fileURLToPath(new URL("../support/idle-holder.mjs", import.meta.url));

/** One holder process: its first line says how many it opened; each `count` asks how many are still open. */
function startHolder(port: string, count: number): { readonly child: ChildProcessWithoutNullStreams; line(): Promise<string> } {
  const child = spawn(process.execPath, [HOLDER, port, String(count)]);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return { child, line: async () => String((await lines.next()).value) };
}

describe("20,000 idle connections (built sidecar)", () => {
  const holders: ChildProcessWithoutNullStreams[] = [];
  afterAll(async () => {
    for (const child of holders) child.kill("SIGKILL");
    await killAllBuiltSidecars();
  });

  it("a fresh client is served within a second, and idle sockets are closed after the idle timeout", async () => {
    assertSidecarBuilt();
    const sidecar = await startBuiltSidecar(
      await surfaceAEnv({ SERVICE_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS), SERVICE_KEEP_ALIVE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS) }),
    );
    const port = new URL(sidecar.url).port;
    const started = Array.from({ length: HOLDERS }, () => startHolder(port, IDLE_SOCKETS / HOLDERS));
    holders.push(...started.map((h) => h.child));
    const reports = await Promise.all(started.map((h) => h.line()));
    const opened = reports.reduce((sum, report) => sum + Number(/^opened (\d+)/.exec(report)?.[1]), 0);
    expect(opened, reports.join("; ")).toBeGreaterThanOrEqual(IDLE_SOCKETS * 0.95);
    const stillOpen = async (): Promise<number> => {
      for (const h of started) h.child.stdin.write("count\n");
      const counts = await Promise.all(started.map((h) => h.line()));
      return counts.reduce((sum, line) => sum + Number(/^open (\d+)/.exec(line)?.[1]), 0);
    };

    const timings: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const answer = await rawRequest(sidecar.url, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5_000);
      timings.push(performance.now() - started);
      expect(parseRaw(answer).status).toBe(200);
    }
    // The holders see the sockets the server closed once their event loops get to it, which on a busy machine can take
    // a while: ask until the count is at the cap, for at most SETTLE_MS, well before the idle timeout closes the rest.
    const settleBy = performance.now() + SETTLE_MS;
    let held = await stillOpen();
    while (held > 4_096 && performance.now() < settleBy) {
      await sleep(250);
      held = await stillOpen();
    }
    console.log(`idle: ${opened} opened, ${held} still open (cap 4096), fresh /health in ${timings.map((t) => t.toFixed(1)).join(", ")} ms`);
    expect(Math.max(...timings)).toBeLessThan(1_000);
    expect(held).toBeLessThanOrEqual(4_096);
    // Still about the cap's worth open: what closed them was eviction, not the idle timeout.
    expect(held).toBeGreaterThan(3_500);

    await sleep(IDLE_TIMEOUT_MS + 3_000);
    expect(await stillOpen()).toBe(0);
    for (const child of holders) {
      child.kill("SIGKILL");
      await once(child, "exit");
    }
    await sidecar.kill();
  }, 90_000);
});
