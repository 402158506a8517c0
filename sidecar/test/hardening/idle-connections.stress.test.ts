/**
 * Idle sockets: 20,000 connections to the BUILT sidecar that send nothing, or one request and then
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
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
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
const HOLDER = fileURLToPath(new URL("../support/idle-holder.mjs", import.meta.url));

/**
 * How many TCP connections process `pid` holds (Linux): its socket descriptors whose inodes `/proc/net/tcp{,6}` lists
 * in a state other than LISTEN, so neither its listening socket nor its stdio pipes (socket pairs) count.
 */
function serverConnections(pid: number): number {
  const connections = new Set<string>();
  for (const table of ["tcp", "tcp6"]) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1)) {
      const columns = line.trim().split(/\s+/);
      // Columns: sl, local, remote, state (0A is LISTEN), ..., inode (the tenth).
      if (columns.length > 9 && columns[3] !== "0A") connections.add(columns[9]!);
    }
  }
  const dir = `/proc/${pid}/fd`;
  return readdirSync(dir).filter((fd) => {
    try {
      const link = readlinkSync(`${dir}/${fd}`);
      return link.startsWith("socket:[") && connections.has(link.slice(8, -1));
    } catch {
      return false;
    }
  }).length;
}

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
    // Counted on the server's side (its socket descriptors): a client can hold a few more it believes open, whose
    // handshakes the kernel completed while the accept queue was full, and which the server therefore never had.
    // A socket just evicted or answered is closed on the server's next turns: sample until none is still closing.
    const pid = sidecar.child.pid!;
    let served = serverConnections(pid);
    for (const settleBy = performance.now() + 2_000; served > 4_096 && performance.now() < settleBy;) {
      await sleep(100);
      served = serverConnections(pid);
    }
    const held = await stillOpen();
    console.log(
      `idle: ${opened} opened, server holds ${served} connections (cap 4096), clients see ${held}; fresh /health in ${timings.map((t) => t.toFixed(1)).join(", ")} ms`,
    );
    expect(Math.max(...timings)).toBeLessThan(1_000);
    expect(served).toBeLessThanOrEqual(4_096);
    // Still about the cap's worth open: what closed them was eviction, not the idle timeout.
    expect(served).toBeGreaterThan(3_500);

    await sleep(IDLE_TIMEOUT_MS + 3_000);
    expect(serverConnections(pid)).toBe(0);
    // The clients' view agrees, but for the few they believe open and the server never accepted.
    expect(await stillOpen()).toBeLessThanOrEqual(Math.max(0, held - served));
    for (const child of holders) {
      child.kill("SIGKILL");
      await once(child, "exit");
    }
    await sidecar.kill();
  }, 90_000);
});
