/**
 * All the BUILT sidecar says is one stream of JSON lines on stdout (docs/sidecar.md, "Logs"), also under load, from
 * the start-up notices (a refused bundle among them) to the shutdown, with the access log on: every line parses,
 * nothing goes to stderr, each request answered has exactly one access line with its request id, and no line holds
 * the API key.
 */
import { randomUUID } from "node:crypto";
import { appendFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { KeepAliveClient, killAllBuiltSidecars, logLines, startBuiltSidecar } from "../support/built-sidecar.js";
import { TRANSFER, copyOfFixturePolicies } from "../support/e2e.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";

const API_KEY = "log-stream-api-key-0123456789abcdef";
const CONNECTIONS = 16;
const ROUNDS = 60;

const dirs: string[] = [];
afterAll(async () => {
  await killAllBuiltSidecars();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("the log stream (built sidecar)", () => {
  it("is JSON lines on stdout alone, from start-up to shutdown, under load", async () => {
    const policies = await copyOfFixturePolicies();
    const data = await mkdtemp(join(tmpdir(), "writ-log-stream-"));
    dirs.push(policies, data);
    // A bundle that does not load: refused at start-up (a notice) and at each request for it.
    await appendFile(join(policies, TRANSFER.policyId, "1.1.0", "policy.ir.json"), " ");
    const sidecar = await startBuiltSidecar(
      {
        SERVICE_API_KEY: API_KEY,
        SERVICE_POLICIES_ROOT: policies,
        SERVICE_DATA_DIR: data,
        SERVICE_PORT: "0",
        SERVICE_B_PORT: "0",
        SERVICE_ACCESS_LOG: "on",
      },
      15_000,
      true,
    );
    const client = new KeepAliveClient(sidecar.url, API_KEY, CONNECTIONS);
    const wrong = new KeepAliveClient(sidecar.url, `${API_KEY}-wrong`, 2);
    const answered = new Map<string, number>();
    try {
      // Each connection's worth of work: a decision, its replay (execute:failure), a bundle refusal, a refused key,
      // a health check and an unknown route.
      const round = async (i: number): Promise<void> => {
        const executionId = `stream-${i}-${randomUUID()}`;
        const decide = { executionId, ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved };
        const answers = [
          await client.request("POST", "/evaluate", JSON.stringify(decide)),
          await client.request("POST", "/evaluate", JSON.stringify(decide)),
          await client.request(
            "POST",
            "/execute",
            JSON.stringify({
              executionId: `${executionId}-b`,
              policyId: TRANSFER.policyId,
              policyVersion: "1.1.0",
              signals: TRANSFER_SIGNALS.approved,
            }),
          ),
          await wrong.request("GET", "/audit/stats"),
          await client.request("GET", "/health"),
          await client.request("GET", "/no/such/route"),
        ];
        for (const answer of answers) answered.set(String(answer.status), (answered.get(String(answer.status)) ?? 0) + 1);
      };
      for (let start = 0; start < ROUNDS; start += CONNECTIONS) {
        await Promise.all(Array.from({ length: Math.min(CONNECTIONS, ROUNDS - start) }, (_, k) => round(start + k)));
      }
    } finally {
      client.close();
      wrong.close();
    }
    expect(Object.fromEntries(answered)).toEqual({ "200": 2 * ROUNDS, "422": 2 * ROUNDS, "401": ROUNDS, "404": ROUNDS });
    sidecar.child.kill("SIGTERM");
    expect(await sidecar.closed).toEqual({ code: 0, signal: null });

    const { stdout, stderr } = sidecar.all();
    expect(stderr).toBe("");
    expect(stdout.endsWith("\n")).toBe(true);
    const lines = logLines(stdout);
    expect(stdout.split("\n").filter((line) => line !== "")).toHaveLength(lines.length);
    for (const line of lines) {
      expect(line).toMatchObject({ level: expect.any(String), msg: expect.any(String), time: expect.any(String), name: "writ-sidecar" });
    }
    expect(stdout).not.toContain(API_KEY);

    const messages = lines.map((line) => line.msg);
    expect(messages).toContainEqual(expect.stringMatching(/^policies root: \d+ bundles verified, 1 refused$/));
    expect(messages).toContainEqual(expect.stringMatching(/^bundle `conformance\.transfer@1\.1\.0` refused \(BUNDLE_TAMPERED\)/));
    expect(messages).toContainEqual(expect.stringMatching(/^Surface A listening on http:\/\//));
    expect(messages).toContainEqual(expect.stringMatching(/^Surface B listening on http:\/\//));
    expect(messages.slice(-2)).toEqual(["SIGTERM: finishing requests in flight, then flushing the data dir", "stopped"]);
    const count = (msg: string) => messages.filter((m) => m === msg).length;
    expect(count("authentication failed")).toBe(ROUNDS);
    expect(count("policy bundle does not load")).toBe(ROUNDS);
    expect(count("execute:failure")).toBe(2 * ROUNDS);

    // One access line per request answered, each with a request id of its own.
    const access = lines.filter((line) => line.msg === "request");
    expect(access).toHaveLength(6 * ROUNDS);
    expect(new Set(access.map((line) => line["requestId"])).size).toBe(access.length);
    for (const line of lines.filter((l) => l.msg === "execute:failure" || l.msg === "policy bundle does not load")) {
      expect(line).toMatchObject({
        requestId: expect.any(String),
        executionId: expect.stringMatching(/^stream-/),
        policyId: TRANSFER.policyId,
      });
    }
  });
});
