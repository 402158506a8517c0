/**
 * Two sidecar processes on one PostgreSQL database, both surfaces: one decision per executionId for the
 * whole fleet, one audit trail, one set of Trust Records, one resolution per override, whichever sidecar is asked.
 * Directly, and through PgBouncer (Debian's, test/support/pgbouncer.ts) in session mode and in transaction mode (with
 * SERVICE_DATABASE_PREPARED_STATEMENTS off), writ's settings set for its role as the start's check asks
 * (docs/fleet.md, "Poolers"). Needs `npm run build` (root `npm test` builds first).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../test/support/postgres.js";
import { KeepAliveClient, killAllBuiltSidecars } from "../support/built-sidecar.js";
import { API_KEY, REPLAY_BODY, auditPath, evaluateBody, mapLimit, parse } from "../durability/load.js";
import { businessTransaction } from "../surface-b/support.js";
import { WRIT_STARTUP_PARAMETERS, pgbouncerUnavailable, setWritSettings, startPgBouncer, type PgBouncer } from "../support/pgbouncer.js";
import { databaseUrlOf, freePort, startFleetSidecar, type FleetSidecar } from "./support.js";

const unavailable = await postgresUnavailable();

/**
 * How the sidecars reach the database: directly, or through a PgBouncer of the test's in that pool mode; `racers` is
 * how many identical decisions race (the direct route races the most; through a pooler the same race, smaller, keeps
 * the stress suite within CI's time).
 */
const ROUTES = [
  { name: "directly", poolMode: null, settings: {}, racers: 5_000 },
  { name: "through PgBouncer in session mode", poolMode: "session", settings: {}, racers: 2_000 },
  {
    name: "through PgBouncer in transaction mode",
    poolMode: "transaction",
    settings: { SERVICE_DATABASE_PREPARED_STATEMENTS: "off" },
    racers: 2_000,
  },
] as const;

for (const route of ROUTES) {
  const skip = unavailable ?? (route.poolMode === null ? null : pgbouncerUnavailable());
  if (skip !== null) {
    describe.skip(`two sidecars on one PostgreSQL database ${route.name}: ${skip}`, () => {
      it("shares replay protection, the audit trail and Trust Records", () => undefined);
    });
    continue;
  }
  describe(`two sidecars on one PostgreSQL database ${route.name} (built sidecar)`, () => {
    let database: TestDatabase;
    let bouncer: PgBouncer | null = null;
    let fleet: FleetSidecar[];
    let clients: KeepAliveClient[];
    let clientsB: KeepAliveClient[];

    beforeAll(async () => {
      database = await createTestDatabase();
      let url = databaseUrlOf(database.pool);
      if (route.poolMode !== null) {
        bouncer = await startPgBouncer({
          server: { host: "127.0.0.1", port: Number(new URL(url).port) },
          port: await freePort(),
          poolMode: route.poolMode,
          ignoreStartupParameters: WRIT_STARTUP_PARAMETERS,
        });
        await setWritSettings(database.pool);
        url = bouncer.urlOf(url);
      }
      // Started together: the migration lock lets one create the schema while the other waits. On one host, each needs
      // an instance id of its own (the host name would be both's: the second would be refused).
      fleet = await Promise.all([
        startFleetSidecar(url, { SERVICE_INSTANCE_ID: "fleet-a", ...route.settings }),
        startFleetSidecar(url, { SERVICE_INSTANCE_ID: "fleet-b", ...route.settings }),
      ]);
      clients = fleet.map((s) => new KeepAliveClient(s.a, API_KEY, 100));
      clientsB = fleet.map((s) => new KeepAliveClient(s.b, API_KEY, 10));
    });
    afterAll(async () => {
      for (const client of [...(clients ?? []), ...(clientsB ?? [])]) client.close();
      await killAllBuiltSidecars();
      await bouncer?.remove();
      await database?.drop();
    });

    it(`${route.racers.toLocaleString("en")} identical POST /evaluate split between both over 200 connections: exactly one 200`, async () => {
      const body = evaluateBody("fleet-one", "approved");
      const answers = await mapLimit(
        Array.from({ length: route.racers }, (_, i) => i),
        200,
        (i) => clients[i % 2]!.request("POST", "/evaluate", body),
      );
      const statuses = new Map<number, number>();
      for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
      console.log(`identical evaluates: ${JSON.stringify(Object.fromEntries(statuses))}`);
      expect(statuses.get(200)).toBe(1);
      expect(statuses.get(422)).toBe(route.racers - 1);
      expect(answers.filter((a) => a.status === 422).every((a) => JSON.stringify(parse(a.text)) === JSON.stringify(REPLAY_BODY))).toBe(
        true,
      );
    });

    it("2,000 distinct decisions alternated between both are all listed by the audit endpoints of either", async () => {
      const ids = Array.from({ length: 2_000 }, (_, i) => `distinct-${i}`);
      const answers = await mapLimit(ids, 50, (id) =>
        clients[Number(id.slice(9)) % 2]!.request("POST", "/evaluate", evaluateBody(id, "approved")),
      );
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
      for (const client of clients) {
        const listed: string[] = [];
        for (let offset = 0; ; offset += 500) {
          const page = await client.json("GET", `/audit/decisions?limit=500&offset=${offset}`);
          expect(page.status).toBe(200);
          const rows = page.body as { executionId: string }[];
          listed.push(...rows.map((r) => r.executionId));
          if (rows.length < 500) break;
        }
        expect(listed.filter((id) => id.startsWith("distinct-")).sort()).toEqual([...ids].sort());
        expect(new Set(listed).size).toBe(listed.length);
        // Each reads a decision the other made.
        for (const id of ["distinct-0", "distinct-1"]) expect((await client.json("GET", auditPath(id))).status).toBe(200);
      }
      const stats = await Promise.all(clients.map((c) => c.json("GET", "/audit/stats")));
      expect(stats[0]!.body).toMatchObject({ total_decisions: "2001" });
      expect((stats[1]!.body as { total_decisions: string }).total_decisions).toBe("2001");
    });

    it("a Trust Record created through one is read, verified, replayed and refused again through the other", async () => {
      const transaction = businessTransaction();
      const id = transaction.businessTransactionId;
      const created = await clientsB[0]!.json("POST", "/transactions", transaction);
      expect(created.status).toBe(201);
      const read = await clientsB[1]!.json("GET", `/trust-records/${id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
      expect(await clientsB[1]!.json("POST", "/verify", { businessTransactionId: id })).toMatchObject({
        status: 200,
        body: { status: "VERIFIED" },
      });
      expect(await clientsB[1]!.json("POST", "/replay", { businessTransactionId: id })).toMatchObject({
        status: 200,
        body: { verified: true },
      });
      expect((await clientsB[0]!.json("GET", `/verification/${id}`)).status).toBe(200);
      expect((await clientsB[1]!.json("POST", "/transactions", transaction)).status).toBe(422);
      for (const client of clientsB) {
        const page = await client.json("GET", "/transactions?pageSize=100");
        expect((page.body as { items: { businessTransactionId: string }[] }).items.map((t) => t.businessTransactionId)).toContain(id);
      }
    });

    it("100 racing overrides of one escalation across both resolve it exactly once", async () => {
      const executionId = `fleet-pending-${randomUUID()}`;
      expect((await clients[0]!.request("POST", "/evaluate", evaluateBody(executionId, "pending"))).status).toBe(200);
      const override = (i: number) =>
        JSON.stringify({
          executionId,
          approved: i % 3 !== 0,
          approvedBy: `approver-${i}`,
          approverRole: "treasury-lead",
          reason: `race ${i}`,
        });
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => clients[i % 2]!.request("POST", "/override", override(i))));
      const won = answers.flatMap((a, i) => (a.status === 200 ? [i] : []));
      expect(won).toHaveLength(1);
      expect(answers.filter((a) => a.status === 409)).toHaveLength(99);
      for (const client of clients) {
        const detail = await client.json("GET", auditPath(executionId));
        expect(detail.body).toMatchObject({ override: { approvedBy: `approver-${won[0]}` } });
      }
    });
  });
}
