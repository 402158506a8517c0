import { StoreUnavailableError } from "@writ/runtime";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { migrate } from "../../../src/storage/postgres/migrations.js";
import { PostgresTrustRecordStore } from "../../../src/storage/postgres/record-store.js";
import { createTestDatabase, postgresUnavailable, testPool, type TestDatabase } from "../../../../test/support/postgres.js";
import { receiptOf, recordOf, trustRecordStoreContract, verificationOf } from "../../surface-b/record-store-contract.js";

const unavailable = await postgresUnavailable();

if (unavailable !== null) {
  describe.skip(`PostgresTrustRecordStore: ${unavailable}`, () => {
    it("runs the Trust Record store contract on PostgreSQL", () => undefined);
  });
} else {
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((d) => d.drop())));
  const fresh = async (): Promise<TestDatabase> => {
    const database = await createTestDatabase();
    databases.push(database);
    await migrate(database.pool);
    return database;
  };

  const replayEntries = async (pool: pg.Pool, fingerprint: string): Promise<number> =>
    Number(
      (await pool.query<{ n: string }>("SELECT count(*) AS n FROM writ_replay WHERE fingerprint = $1", [Buffer.from(fingerprint, "utf8")]))
        .rows[0]!.n,
    );

  const shared = await fresh();
  trustRecordStoreContract("PostgresTrustRecordStore", async () => {
    const { pool } = shared;
    return {
      store: new PostgresTrustRecordStore(pool),
      corrupt: async (id, text) => void (await pool.query("INSERT INTO writ_trust_records (id, body) VALUES ($1, $2)", [id, text])),
      dispose: async () => void (await pool.query("TRUNCATE writ_trust_history, writ_trust_records RESTART IDENTITY")),
    };
  });

  describe("PostgresTrustRecordStore", () => {
    it("two stores on two pools of one database (two sidecars): one create wins, appends from both are all kept", async () => {
      const { pool } = await fresh();
      const other = testPool((pool.options as { connectionString: string }).connectionString);
      try {
        const a = new PostgresTrustRecordStore(pool);
        const b = new PostgresTrustRecordStore(other);
        const created = await Promise.all(
          Array.from({ length: 40 }, (_, n) =>
            (n % 2 ? a : b).create(recordOf("tx-f", n), verificationOf("tx-f", n), receiptOf("tx-f", n)),
          ),
        );
        expect(created.filter(Boolean)).toHaveLength(1);
        await Promise.all(Array.from({ length: 60 }, (_, n) => (n % 2 ? a : b).appendReceipt("tx-f", receiptOf("tx-f", 100 + n))));
        const { rows } = await pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM writ_trust_history WHERE id = 'tx-f' AND kind = 'receipt'",
        );
        expect(Number(rows[0]!.n)).toBe(61);
        expect(await b.record("tx-f")).toEqual(await a.record("tx-f"));
      } finally {
        await other.end();
      }
    });

    it("inOneTransaction: the unit's consumption and record commit together in `create`", async () => {
      const { pool } = await fresh();
      const store = new PostgresTrustRecordStore(pool, { replay: { keepRecords: false } });
      const created = await store.inOneTransaction!(async (unit) => {
        expect((await unit.replay.consume("fp-a")).ok).toBe(true);
        // Nothing is visible outside the unit before its `create`.
        expect(await replayEntries(pool, "fp-a")).toBe(0);
        return unit.create(recordOf("tx-a"), verificationOf("tx-a", 0), receiptOf("tx-a", 0));
      });
      expect(created).toBe(true);
      expect(await replayEntries(pool, "fp-a")).toBe(1);
      expect(await store.record("tx-a")).toMatchObject({ state: "stored" });
      expect(await store.latestReceipt("tx-a")).toEqual(receiptOf("tx-a", 0));
    });

    it("inOneTransaction: a unit that throws, or whose id already has a record, commits nothing", async () => {
      const { pool } = await fresh();
      const store = new PostgresTrustRecordStore(pool, { replay: { keepRecords: false } });
      const failing = store.inOneTransaction!(async (unit) => {
        await unit.replay.consume("fp-b");
        throw new Error("sealing failed");
      });
      await expect(failing).rejects.toThrow("sealing failed");
      expect(await replayEntries(pool, "fp-b")).toBe(0);

      await store.create(recordOf("tx-c"), verificationOf("tx-c", 0), receiptOf("tx-c", 0));
      const again = await store.inOneTransaction!(async (unit) => {
        await unit.replay.consume("fp-c");
        return unit.create(recordOf("tx-c", 1), verificationOf("tx-c", 1), receiptOf("tx-c", 1));
      });
      expect(again).toBe(false);
      expect(await replayEntries(pool, "fp-c")).toBe(0);
      expect(await store.record("tx-c")).toEqual({ state: "stored", value: recordOf("tx-c") });
      // Both clients went back to the pool, reusable: nothing is left in a transaction.
      const { rows } = await pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
      );
      expect(Number(rows[0]!.n)).toBe(0);
    });

    it("inOneTransaction: no connection is taken before the unit's first statement", async () => {
      const { pool } = await fresh();
      const small = new pg.Pool({ connectionString: (pool.options as { connectionString: string }).connectionString, max: 1 });
      try {
        const store = new PostgresTrustRecordStore(small, { replay: { keepRecords: false } });
        // Work before the decision (a bundle's pin claimed through the same pool of one connection) is not starved.
        const created = await store.inOneTransaction!(async (unit) => {
          await small.query("SELECT 1");
          await unit.replay.consume("fp-d");
          return unit.create(recordOf("tx-d"), verificationOf("tx-d", 0), receiptOf("tx-d", 0));
        });
        expect(created).toBe(true);
      } finally {
        await small.end();
      }
    });

    it("a database it cannot reach is StoreUnavailableError (503 at the HTTP edge) for every method", async () => {
      const nowhere = new pg.Pool({ connectionString: "postgresql://postgres@127.0.0.1:1/none", connectionTimeoutMillis: 1_000 });
      try {
        const store = new PostgresTrustRecordStore(nowhere);
        await expect(store.create(recordOf("tx"), verificationOf("tx", 0), receiptOf("tx", 0))).rejects.toBeInstanceOf(
          StoreUnavailableError,
        );
        await expect(store.record("tx")).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store.count()).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store.appendReceipt("tx", receiptOf("tx", 1))).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        await nowhere.end();
      }
    });
  });
}
