/**
 * Replay protection under a race (spec 2.12, INV-013): 5,000 byte-identical `POST /evaluate` requests (one
 * executionId) over 200 keep-alive connections to the BUILT sidecar in its own process. Exactly one is answered
 * 200; every other one is the INV-013 refusal, with no 5xx and no connection error; the audit trail holds exactly
 * that one decision, and one replay-attempt security event per refusal.
 *
 * Needs the build (`npm run test:e2e` builds first).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertSidecarBuilt,
  killAllBuiltSidecars,
  KeepAliveClient,
  startBuiltSidecar,
  type BuiltSidecar,
  type HttpAnswer,
} from "../support/built-sidecar.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import {
  API_KEY,
  EXPECTED_STATUS,
  POLICY_ID,
  POLICY_VERSION,
  REPLAY_BODY,
  SIGNAL_SETS,
  auditPath,
  evaluateBody,
  isRecord,
  surfaceAEnv,
} from "./load.js";

const REQUESTS = 5_000;
const CONNECTIONS = 200;
const ROUNDS = 24;

describe("replay race (built sidecar)", () => {
  let dataDir: string | undefined;
  let sidecar: BuiltSidecar | undefined;

  beforeAll(async () => {
    assertSidecarBuilt();
    dataDir = await mkdtemp(join(tmpdir(), "writ-durability-race-"));
    // Each refusal is an `execute:failure` warning (SERVICE_LOG_LEVEL warn); the output is drained and only its tail kept.
    sidecar = await startBuiltSidecar(await surfaceAEnv({ SERVICE_DATA_DIR: dataDir }));
  });
  afterAll(async () => {
    await killAllBuiltSidecars();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it(`${REQUESTS} identical POST /evaluate over ${CONNECTIONS} connections: exactly one 200`, async () => {
    const s = sidecar!;
    const executionId = `race-${Date.now()}`;
    const body = evaluateBody(executionId, "approved");
    const client = new KeepAliveClient(s.url, API_KEY, CONNECTIONS);
    const sockets = new Set<unknown>();
    client.agent.on("free", (socket: unknown) => sockets.add(socket));
    let answers: PromiseSettledResult<HttpAnswer>[];
    let elapsed: number;
    try {
      // Warm-up, without side effects: every connection open and the policy loaded, so the identical requests
      // meet at the replay store rather than queue behind connection set-up and the first bundle load.
      const dryRun = JSON.stringify({ policyId: POLICY_ID, policyVersion: POLICY_VERSION, signals: TRANSFER_SIGNALS.approved });
      const warm = await Promise.all(Array.from({ length: CONNECTIONS }, () => client.request("POST", "/evaluate", dryRun)));
      expect(
        warm.filter((w) => w.status !== 200).map((w) => `${w.status} ${w.text}`),
        "dry-run warm-up",
      ).toEqual([]);
      sockets.clear();
      const started = Date.now();
      answers = await Promise.allSettled(Array.from({ length: REQUESTS }, () => client.request("POST", "/evaluate", body)));
      elapsed = Date.now() - started;
    } finally {
      client.close();
    }

    const ok: HttpAnswer[] = [];
    const refused: HttpAnswer[] = [];
    const other = new Map<string, number>();
    const note = (key: string): void => void other.set(key, (other.get(key) ?? 0) + 1);
    for (const answer of answers) {
      if (answer.status === "rejected") note(`connection error: ${(answer.reason as Error).message}`);
      else if (answer.value.status === 200) ok.push(answer.value);
      else if (answer.value.status === 422 && answer.value.text === JSON.stringify(REPLAY_BODY)) refused.push(answer.value);
      else note(`${answer.value.status} ${answer.value.text.slice(0, 200)}`);
    }
    const tally = `${ok.length} × 200, ${refused.length} × 422 INV-013, others: ${JSON.stringify(Object.fromEntries(other))}`;
    console.log(`replay race: ${REQUESTS} requests over ${sockets.size} connections in ${elapsed} ms: ${tally}`);
    expect(Object.fromEntries(other), `${tally}\n${s.output().slice(-2_000)}`).toEqual({});
    expect(ok.length, tally).toBe(1);
    expect(refused.length, tally).toBe(REQUESTS - 1);
    // The load really was spread over (nearly) every connection.
    expect(sockets.size, `only ${sockets.size} connections were used`).toBeGreaterThanOrEqual(CONNECTIONS * 0.9);

    const winner = JSON.parse(ok[0]!.text) as unknown;
    expect(isRecord(winner) && winner["status"], ok[0]!.text).toBe(EXPECTED_STATUS.approved);
    const attestation = isRecord(winner) && isRecord(winner["attestation"]) ? winner["attestation"] : {};
    expect(attestation["executionId"]).toBe(executionId);

    const reader = new KeepAliveClient(s.url, API_KEY, 1);
    try {
      const detail = await reader.json("GET", auditPath(executionId));
      expect(detail.status, JSON.stringify(detail.body)).toBe(200);
      const d = isRecord(detail.body) ? detail.body : {};
      expect({ executionId: d["executionId"], decision: d["decision"], endpoint: d["endpoint"] }).toEqual({
        executionId,
        decision: "approved",
        endpoint: "evaluate",
      });
      expect(d["attestation"], "the audited attestation is the one answered").toEqual(attestation);

      const list = await reader.json("GET", "/audit/decisions?limit=500");
      expect(list.status).toBe(200);
      const rows = Array.isArray(list.body) ? list.body : [];
      expect(rows.map((r: unknown) => (isRecord(r) ? r["executionId"] : r))).toEqual([executionId]);

      const stats = await reader.json("GET", "/audit/stats");
      expect(stats.status).toBe(200);
      const st = isRecord(stats.body) ? stats.body : {};
      expect(st["total_decisions"], JSON.stringify(stats.body)).toBe("1");
      // Each refusal is a replay attempt in the security trail.
      expect(st["total_security_events"], JSON.stringify(stats.body)).toBe(String(REQUESTS - 1));
    } finally {
      reader.close();
    }
  }, 120_000);

  // More chances to meet a check-then-act window: one fresh executionId per round, one request per connection,
  // all written in the same tick on connections already open, for each of the three outcomes.
  it(`${ROUNDS} rounds of ${CONNECTIONS} identical POST /evaluate, one per connection: exactly one 200 per round`, async () => {
    const s = sidecar!;
    const client = new KeepAliveClient(s.url, API_KEY, CONNECTIONS);
    const tallies: string[] = [];
    const wrong: string[] = [];
    let before: Record<string, unknown>;
    try {
      const stats = await client.json("GET", "/audit/stats");
      before = isRecord(stats.body) ? stats.body : {};
      const dryRun = JSON.stringify({ policyId: POLICY_ID, policyVersion: POLICY_VERSION, signals: TRANSFER_SIGNALS.approved });
      await Promise.all(Array.from({ length: CONNECTIONS }, () => client.request("POST", "/evaluate", dryRun)));
      for (let round = 0; round < ROUNDS; round++) {
        const signals = SIGNAL_SETS[round % SIGNAL_SETS.length]!;
        const executionId = `race-round-${Date.now()}-${round}`;
        const body = evaluateBody(executionId, signals);
        const answers = await Promise.allSettled(Array.from({ length: CONNECTIONS }, () => client.request("POST", "/evaluate", body)));
        const ok = answers.filter((a) => a.status === "fulfilled" && a.value.status === 200).length;
        const refused = answers.filter(
          (a) => a.status === "fulfilled" && a.value.status === 422 && a.value.text === JSON.stringify(REPLAY_BODY),
        ).length;
        tallies.push(`${ok}/${refused}`);
        if (ok !== 1 || refused !== CONNECTIONS - 1) {
          const others = answers.flatMap((a) =>
            a.status === "rejected"
              ? [(a.reason as Error).message]
              : a.value.status === 200 || a.value.status === 422
                ? []
                : [`${a.value.status} ${a.value.text.slice(0, 120)}`],
          );
          wrong.push(
            `round ${round} (${executionId}, ${signals}): ${ok} × 200, ${refused} × 422 INV-013, others: ${others.slice(0, 3).join("; ")}`,
          );
          continue;
        }
        const detail = await client.json("GET", auditPath(executionId));
        const d = isRecord(detail.body) ? detail.body : {};
        if (detail.status !== 200 || d["executionId"] !== executionId || d["decision"] !== EXPECTED_STATUS[signals]) {
          wrong.push(
            `round ${round} (${executionId}, ${signals}): audit answered ${detail.status} ${JSON.stringify(detail.body).slice(0, 160)}`,
          );
        }
      }
      console.log(`replay race rounds: 200s/refusals per round: ${tallies.join(" ")}`);
      expect(wrong, `${wrong.length} of ${ROUNDS} rounds went wrong`).toEqual([]);

      const after = await client.json("GET", "/audit/stats");
      const a = isRecord(after.body) ? after.body : {};
      expect(Number(a["total_decisions"]) - Number(before["total_decisions"]), JSON.stringify(after.body)).toBe(ROUNDS);
      expect(Number(a["total_security_events"]) - Number(before["total_security_events"]), JSON.stringify(after.body)).toBe(
        ROUNDS * (CONNECTIONS - 1),
      );
    } finally {
      client.close();
    }
  }, 120_000);
});
