/**
 * PostgreSQL failover under load (docs/fleet.md, "Failover"): a private primary with a synchronous hot standby, two
 * built sidecars on the URL of both (`…@primary,standby/postgres?target_session_attrs=read-write`), deciding unique
 * executionIds, half of them sent to both sidecars at once. The primary crashes (immediate shutdown) and the standby is
 * promoted while the load runs. Then: every answer was a decision (200, or the replay refusal 422 of an executionId the
 * other sidecar took) or the store's 503, none slower than the timeouts allow; none was a 200 while no server accepted
 * writes, and readiness said 503 then, naming each host and why; every executionId acknowledged 200, before, during or
 * after the switch, is in the promoted server's audit trail and refused as a replay by both sidecars; none was approved
 * twice, retries of the ones answered 503 included; each sidecar's record log verifies across the switch and the two
 * hold every acknowledged decision; and both sidecars decide again, and are ready again, within 10 s of the promotion,
 * with no restart (the times are printed). Needs `npm run build` (root `npm test` builds first).
 */
import { createPublicKey } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExportVerifier, executionFingerprint, loadPublicKeyPem } from "@writ/runtime";
import { KeepAliveClient, killAllBuiltSidecars, type HttpAnswer } from "../support/built-sidecar.js";
import {
  privatePostgresUnavailable,
  startPrivatePostgres,
  startStandby,
  type PrivatePostgres,
  type PrivateStandby,
} from "../support/private-postgres.js";
import { API_KEY, REPLAY_BODY, evaluateBody, mapLimit, parse, show } from "../durability/load.js";
import { checkExport } from "../support/export-check.js";
import { FLEET_SIGNING_KEY, freePort, startFleetSidecar, type FleetSidecar } from "./support.js";

const UNAVAILABLE_BODY = { error: "replay store unavailable" };
/** Short database timeouts, so the switch is answered quickly (as database-loss.stress.test.ts). */
const TIMEOUTS = { SERVICE_DATABASE_STATEMENT_TIMEOUT_MS: "1000", SERVICE_DATABASE_CONNECT_TIMEOUT_MS: "1000" };
/**
 * The longest an answer may take: a pooled connection's walk over both hosts and its own connection (3 × 1 s), then a
 * statement (1 s, and the client's 1 s margin), with room for a busy machine.
 */
const LONGEST_ANSWER_MS = 8_000;
/** Service must be back within this long of the promotion. */
const BACK_WITHIN_MS = 10_000;
const WORKERS = 6;
/** The instance ids of the two sidecars: the names of their record logs. */
const LOG_IDS = ["failover-a", "failover-b"] as const;
const FLEET_KEY = loadPublicKeyPem(createPublicKey(FLEET_SIGNING_KEY).export({ type: "spki", format: "pem" }).toString());

const unavailable = privatePostgresUnavailable();

interface Answer {
  readonly id: string;
  readonly sidecar: number;
  readonly answer: HttpAnswer;
  readonly startedAt: number;
  readonly endedAt: number;
}

interface Readiness {
  readonly sidecar: number;
  readonly at: number;
  readonly status: number;
  /** `store.problem` of the body. */
  readonly problem: string | undefined;
}

const approved = (a: Answer): boolean => a.answer.status === 200 && (parse(a.answer.text) as { status?: string }).status === "approved";

if (unavailable !== null) {
  describe.skip(`PostgreSQL failover under load: ${unavailable}`, () => {
    it("loses no acknowledged decision and approves none twice", () => undefined);
  });
} else {
  describe("PostgreSQL failover under load (two built sidecars, primary and synchronous standby)", () => {
    let primary: PrivatePostgres;
    let standby: PrivateStandby;
    let fleet: FleetSidecar[];
    let clients: KeepAliveClient[];
    let health: KeepAliveClient[];

    beforeAll(async () => {
      primary = await startPrivatePostgres(await freePort());
      standby = await startStandby(primary, await freePort(), { synchronous: true });
      const url = `postgresql://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/postgres?target_session_attrs=read-write`;
      // Started one after the other: the first creates the schema, on the primary, as any fleet's first sidecar does.
      fleet = [];
      for (const id of LOG_IDS) fleet.push(await startFleetSidecar(url, { SERVICE_INSTANCE_ID: id, ...TIMEOUTS }));
      clients = fleet.map((s) => new KeepAliveClient(s.a, API_KEY, 2 * WORKERS));
      health = fleet.map((s) => new KeepAliveClient(s.a, API_KEY, 1));
    });
    afterAll(async () => {
      for (const client of [...(clients ?? []), ...(health ?? [])]) client.close();
      await killAllBuiltSidecars();
      await standby?.remove();
      await primary?.remove();
    });

    it("primary crashed and standby promoted under load: nothing acknowledged lost, nothing approved twice, back within 10 s", async () => {
      const answers: Answer[] = [];
      const readiness: Readiness[] = [];
      let stopped = false;
      let n = 0;
      const ask = async (sidecar: number, id: string): Promise<void> => {
        const startedAt = Date.now();
        const answer = await clients[sidecar]!.request("POST", "/evaluate", evaluateBody(id, "approved"));
        answers.push({ id, sidecar, answer, startedAt, endedAt: Date.now() });
      };
      // Every even executionId goes to both sidecars at once (a duplicate racing itself); the others to one of them.
      const workers = Array.from({ length: WORKERS }, async () => {
        while (!stopped) {
          const i = n++;
          const id = `failover-${i}`;
          await (i % 2 === 0 ? Promise.all([ask(0, id), ask(1, id)]) : ask(i % 4 === 1 ? 0 : 1, id));
        }
      });
      const watchers = health.map(async (client, sidecar) => {
        while (!stopped) {
          const { status, body } = await client.json("GET", "/health?probe=ready");
          readiness.push({ sidecar, at: Date.now(), status, problem: (body as { store?: { problem?: string } }).store?.problem });
          await sleep(50);
        }
      });

      await sleep(2_000);
      const crashCalledAt = Date.now();
      await primary.crash();
      const crashedAt = Date.now();
      await sleep(2_500);
      const promoteCalledAt = Date.now();
      await standby.promote();
      const promotedAt = Date.now();
      const firstApproval = (sidecar: number): Answer | undefined =>
        answers
          .filter((a) => a.sidecar === sidecar && a.startedAt >= promoteCalledAt && approved(a))
          .sort((x, y) => x.endedAt - y.endedAt)[0];
      const readyAgain = (sidecar: number): Readiness | undefined =>
        readiness.filter((r) => r.sidecar === sidecar && r.at >= promoteCalledAt && r.status === 200).sort((x, y) => x.at - y.at)[0];
      for (let waited = 0; waited < BACK_WITHIN_MS + 5_000; waited += 100) {
        if ([0, 1].every((s) => firstApproval(s) !== undefined && readyAgain(s) !== undefined)) break;
        await sleep(100);
      }
      await sleep(1_500);
      stopped = true;
      await Promise.all([...workers, ...watchers]);

      // Retries of every executionId no sidecar approved, once service is back: each is decided now, or refused as a
      // replay when its write had committed after all; never approved a second time.
      const unacknowledged = [...new Set(answers.map((a) => a.id))].filter((id) => !answers.some((a) => a.id === id && approved(a)));
      const retries = await mapLimit(unacknowledged, 8, async (id) => {
        const startedAt = Date.now();
        const answer = await clients[0]!.request("POST", "/evaluate", evaluateBody(id, "approved"));
        return { id, sidecar: 0, answer, startedAt, endedAt: Date.now() };
      });

      const phase = (a: Answer): string => (a.startedAt < crashCalledAt ? "before" : a.startedAt < promotedAt ? "switch" : "after");
      const counts: Record<string, Record<number, number>> = {};
      for (const a of answers) {
        const row = (counts[phase(a)] ??= {});
        row[a.answer.status] = (row[a.answer.status] ?? 0) + 1;
      }
      const since = (at: number | undefined): string => (at === undefined ? "never" : `${at - promoteCalledAt} ms`);
      const longest = Math.max(...answers.map((a) => a.endedAt - a.startedAt));
      console.log(
        `failover: answers by phase ${JSON.stringify(counts)}, retries ${JSON.stringify(
          retries.reduce<Record<number, number>>((c, r) => ({ ...c, [r.answer.status]: (c[r.answer.status] ?? 0) + 1 }), {}),
        )}, longest ${longest} ms; crash took ${crashedAt - crashCalledAt} ms, promote ${promotedAt - promoteCalledAt} ms; from promote(): ` +
          [0, 1]
            .map((s) => `sidecar ${s} first 200 in ${since(firstApproval(s)?.endedAt)}, ready in ${since(readyAgain(s)?.at)}`)
            .join("; "),
      );

      // Only decisions and the store's 503, within bounded time.
      const odd = answers.filter(
        (a) =>
          !(
            a.answer.status === 200 ||
            (a.answer.status === 422 && JSON.stringify(parse(a.answer.text)) === JSON.stringify(REPLAY_BODY)) ||
            (a.answer.status === 503 && JSON.stringify(parse(a.answer.text)) === JSON.stringify(UNAVAILABLE_BODY))
          ),
      );
      expect(odd.slice(0, 5).map((a) => show(a.answer))).toEqual([]);
      expect(longest).toBeLessThan(LONGEST_ANSWER_MS);
      expect(retries.filter((r) => r.answer.status !== 200 && r.answer.status !== 422).map((r) => show(r.answer))).toEqual([]);
      // Fail closed: while no server accepted writes, nothing was approved, and readiness said so.
      const gap = answers.filter((a) => a.startedAt > crashedAt && a.endedAt < promoteCalledAt);
      expect(gap.length).toBeGreaterThan(0);
      expect(gap.filter((a) => a.answer.status !== 503).map((a) => `${a.id}: ${show(a.answer)}`)).toEqual([]);
      // Readiness fails within 1 s of the crash (the probe's interval and deadline) and stays failed until the promotion:
      // a standby, reachable but read-only, never makes a sidecar ready.
      for (const s of [0, 1]) {
        const seen = readiness.filter((r) => r.sidecar === s && r.at > crashedAt + 1_000 && r.at < promoteCalledAt);
        expect(seen.length).toBeGreaterThan(0);
        expect(seen.filter((r) => r.status !== 503)).toEqual([]);
        // Saying why: each host, and why it did not qualify, to the last sample; and the standby as read-only (a walk on
        // a busy machine may instead find it did not answer within the connect timeout, which is also why).
        const hosts = `no host of the database URL accepts read-write sessions: 127\\.0\\.0\\.1:${primary.port} failed: .*; 127\\.0\\.0\\.1:${standby.port}`;
        expect(seen.at(-1)!.problem).toMatch(new RegExp(`${hosts} (is read-only|did not answer within \\d+ ms)$`));
        expect(seen.map((r) => r.problem)).toContainEqual(expect.stringMatching(new RegExp(`${hosts} is read-only$`)));
      }
      // Back within 10 s of the promotion, by themselves.
      for (const s of [0, 1]) {
        expect(firstApproval(s)!.endedAt - promoteCalledAt).toBeLessThan(BACK_WITHIN_MS);
        expect(readyAgain(s)!.at - promoteCalledAt).toBeLessThan(BACK_WITHIN_MS);
      }
      expect(answers.some((a) => a.startedAt < crashCalledAt && approved(a))).toBe(true);

      // No executionId approved twice: over both sidecars, the whole run and the retries.
      const approvals = new Map<string, number>();
      for (const a of [...answers, ...retries]) if (approved(a)) approvals.set(a.id, (approvals.get(a.id) ?? 0) + 1);
      expect([...approvals].filter(([, count]) => count > 1)).toEqual([]);

      // Every acknowledged decision is in the promoted server's audit trail, and refused as a replay by both sidecars.
      const acknowledged = [...approvals.keys()];
      const promoted = new pg.Client({ connectionString: standby.url });
      await promoted.connect();
      try {
        const { rows } = await promoted.query<{ n: string }>(
          "SELECT count(DISTINCT execution_fp) AS n FROM writ_audit_records WHERE kind = 'decision' AND execution_fp = ANY($1)",
          [acknowledged.map((id) => executionFingerprint(id))],
        );
        expect(Number(rows[0]!.n)).toBe(acknowledged.length);
      } finally {
        await promoted.end();
      }
      const replays = await mapLimit(
        acknowledged.flatMap((id) => [0, 1].map((s) => [s, id] as const)),
        16,
        async ([s, id]) => ({ id, s, answer: await clients[s]!.request("POST", "/evaluate", evaluateBody(id, "approved")) }),
      );
      expect(
        replays
          .filter((r) => JSON.stringify(parse(r.answer.text)) !== JSON.stringify(REPLAY_BODY))
          .map((r) => `${r.id} on ${r.s}: ${show(r.answer)}`),
      ).toEqual([]);

      // Each sidecar's tamper-evident record log, exported by the sidecar itself, verifies end to end across the switch,
      // and together they hold every acknowledged decision.
      const logged = new Set<string>();
      for (const [s, logId] of [...LOG_IDS.entries()]) {
        const response = await fetch(`${fleet[s]!.a}/audit/export?logId=${logId}`, { headers: { authorization: `Bearer ${API_KEY}` } });
        expect(response.status).toBe(200);
        const { report, decisions } = checkExport(await response.text(), new ExportVerifier([FLEET_KEY]));
        for (const id of decisions) logged.add(id);
        expect(report.failures.slice(0, 5), `the log \`${logId}\` does not verify`).toEqual([]);
      }
      expect(acknowledged.filter((id) => !logged.has(id)).slice(0, 20)).toEqual([]);
    });
  });
}
