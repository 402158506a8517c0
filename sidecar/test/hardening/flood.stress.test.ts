/**
 * A flood without the key: 200,000 requests with a wrong Bearer key to the BUILT sidecar grow its data dir
 * by a bounded amount (at most 1 MB; before, each wrote a ~220-byte security event: 44 MB), and the audit trail still
 * says what happened: one event written at once, one aggregate row counting the rest once the interval ends.
 */
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertSidecarBuilt, killAllBuiltSidecars, KeepAliveClient, startBuiltSidecar } from "../support/built-sidecar.js";
import { API_KEY, surfaceAEnv } from "../durability/load.js";

const REQUESTS = 200_000;
const MAX_GROWTH_BYTES = 1024 * 1024;
const INTERVAL_S = 2;
const CONNECTIONS = 32;
const PIPELINING = 8;

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) total += (await stat(join(dir, name))).size;
  return total;
}

describe("a flood of wrong-key requests (built sidecar)", () => {
  let dataDir: string;

  beforeAll(async () => {
    assertSidecarBuilt();
    dataDir = await mkdtemp(join(tmpdir(), "writ-flood-"));
  });
  afterAll(async () => {
    await killAllBuiltSidecars();
    await rm(dataDir, { recursive: true, force: true });
  });

  it(`${REQUESTS.toLocaleString("en")} requests grow the data dir by at most 1 MB, and are counted`, async () => {
    const sidecar = await startBuiltSidecar(
      await surfaceAEnv({ SERVICE_DATA_DIR: dataDir, SERVICE_AUDIT_SECURITY_INTERVAL_S: String(INTERVAL_S) }),
    );
    const client = new KeepAliveClient(sidecar.url, API_KEY, 1);
    try {
      expect((await client.request("GET", "/audit/stats")).status).toBe(200);
      const before = await dirBytes(dataDir);
      const result = await autocannon({
        url: `${sidecar.url}/audit/stats`,
        headers: { authorization: "Bearer not-the-key-0123456789abcdef" },
        connections: CONNECTIONS,
        pipelining: PIPELINING,
        amount: REQUESTS,
      });
      // autocannon stops counting once `amount` are sent: answers still in its pipelines are not counted.
      expect(result["2xx"]).toBe(0);
      expect(result["4xx"]).toBeGreaterThanOrEqual(REQUESTS - CONNECTIONS * PIPELINING);
      // The aggregate is written once its interval has ended (checked every second).
      await sleep((INTERVAL_S + 1.5) * 1_000);
      const stats = await client.json("GET", "/audit/stats");
      const growth = (await dirBytes(dataDir)) - before;
      console.log(`flood: ${REQUESTS} wrong-key requests in ${result.duration} s grew the data dir by ${growth} bytes`);
      expect(growth).toBeLessThanOrEqual(MAX_GROWTH_BYTES);
      // Every refused request is counted, in a row of its own or in an aggregate.
      const counted = Number((stats.body as { total_security_events: string }).total_security_events);
      expect(counted).toBeGreaterThanOrEqual(result["4xx"]);
      expect(counted).toBeLessThanOrEqual(REQUESTS);
      const events = (await client.json("GET", "/audit/security?limit=500")).body as { type: string; count?: number }[];
      expect(events.filter((e) => e.type === "authentication_failed").reduce((sum, e) => sum + (e.count ?? 1), 0)).toBe(counted);
      expect(events.length).toBeLessThanOrEqual(2 * Math.ceil(result.duration / INTERVAL_S + 1));
    } finally {
      client.close();
      await sidecar.kill();
    }
  }, 120_000);
});
