/**
 * The record log on the fleet's PostgreSQL database (log-storage.ts; docs/audit.md, "Serving the log", with its tables,
 * migrations 4 and 5): one log per sidecar instance, every sidecar's in the same tables, each readable from any sidecar.
 * The statement that stores a record inserts its `writ_audit_log_pending` row: the replay store's transition for
 * decisions, overrides and confirmations (replay-store.ts `PostgresReplayStoreOptions.recordLog`), the audit log's
 * insert for the others. `ref` names the record: the execution fingerprint (with `kind`), or a `seq`.
 *
 * The log's write lock is its `writ_audit_log_state` row, locked (`FOR UPDATE`): sequencing and checkpoints of one log
 * happen one at a time, whichever sidecar runs them. A sidecar waits for its own log's lock; another's (a stale log it
 * takes over) it takes only if no session holds it (`FOR UPDATE SKIP LOCKED`), else leaves it for a later round: a lock
 * held by a lost session (until the server ends it, pool.ts) never holds up every sidecar's rounds.
 */
import type { PostgresRecordTemplates } from "./record-templates.js";
import {
  entryLeafHash,
  executionFingerprint,
  hashFromHex,
  toHex,
  type LeafRange,
  type LogEntryKind,
  type PerfectSubtree,
  type SignedCheckpoint,
} from "@writ/runtime";
import { LOG_PENDING_TABLE } from "./tables.js";
import type pg from "pg";
import type {
  CheckpointSigner,
  ExportSession,
  LogCounts,
  RecordLogStorage,
  StoredEntry,
  UnloggedRecord,
} from "../../audit/record-log/log-storage.js";
import { appendToLog, nextCheckpoint, type LogState } from "../../audit/record-log/log-tree.js";
import { OUTSIDE_TABLE } from "./outside-log.js";
import { checkOut, query, transaction } from "./connection/query.js";
import { ON_READ_DATABASE } from "./connection/read-pool.js";
import { PAGE, PostgresLogReads, candidates, checkpointAt } from "./record-log-reads.js";
import { PRUNE_LOCK } from "./trail-prune.js";

const PENDING = LOG_PENDING_TABLE;

const ADOPT_LOCK = "writ.audit.log.adopt";

interface StateRow {
  readonly size: string;
  readonly frontier: string;
  readonly latest_size: string | null;
}

export class PostgresLogStorage implements RecordLogStorage {
  readonly #pool: pg.Pool;
  readonly #reads: PostgresLogReads;
  readonly #templates: PostgresRecordTemplates | null;
  readonly #readPool: pg.Pool | null;
  readonly logId: string;

  /**
   * The records are in the tables the migrations create (stored-records.ts), which the triggers of migration 5 watch.
   * The schema must be migrated. `readPool`: the read database's (read-pool.ts), where exports read; null: `pool`.
   */
  /** `templates`: what coded decision records are read with (record-templates.ts); null: every body is JSON. */
  constructor(pool: pg.Pool, logId: string, readPool: pg.Pool | null = null, templates: PostgresRecordTemplates | null = null) {
    this.#pool = pool;
    this.#templates = templates;
    this.#reads = new PostgresLogReads(pool, templates);
    this.#readPool = readPool;
    this.logId = logId;
  }

  async sequence(logId: string, max: number): Promise<number> {
    const { rows: any } = await query<{ any: boolean }>(
      this.#pool,
      "reading the audit record log",
      `SELECT EXISTS (SELECT 1 FROM ${PENDING} WHERE log_id = $1) AS any`,
      [logId],
    );
    if (any[0]?.any !== true) return 0;
    return transaction(this.#pool, "sequencing the audit record log", async (client) => {
      const state = await this.#lockState(client, logId);
      if (state === null) return 0;
      const { rows } = await query<{ seq: string; kind: LogEntryKind; ref: string; leaf: Buffer }>(
        client,
        "sequencing the audit record log",
        `DELETE FROM ${PENDING} WHERE seq IN (SELECT seq FROM ${PENDING} WHERE log_id = $1 ORDER BY seq LIMIT $2) RETURNING seq, kind, ref, leaf`,
        [logId, max],
      );
      if (rows.length === 0) return 0;
      rows.sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
      const appended = appendToLog(
        stateOf(state),
        rows.map((r) => ({ kind: r.kind, ref: r.ref, leaf: r.leaf })),
      );
      await query(
        client,
        "sequencing the audit record log",
        `INSERT INTO writ_audit_log_entries (log_id, position, kind, ref, leaf) SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bytea[])`,
        [
          logId,
          appended.entries.map((e) => e.position),
          appended.entries.map((e) => e.kind),
          appended.entries.map((e) => e.ref),
          appended.entries.map((e) => Buffer.from(e.leaf)),
        ],
      );
      if (appended.nodes.length > 0) {
        await query(
          client,
          "sequencing the audit record log",
          `INSERT INTO writ_audit_log_nodes (log_id, height, idx, hash) SELECT $1, * FROM unnest($2::integer[], $3::bigint[], $4::bytea[])`,
          [logId, appended.nodes.map((n) => n.height), appended.nodes.map((n) => n.index), appended.nodes.map((n) => Buffer.from(n.hash))],
        );
      }
      await query(client, "sequencing the audit record log", "UPDATE writ_audit_log_state SET size = $2, frontier = $3 WHERE log_id = $1", [
        logId,
        appended.state.size,
        JSON.stringify(appended.state.frontier.map(toHex)),
      ]);
      return rows.length;
    });
  }

  checkpoint(logId: string, signer: CheckpointSigner, now: Date): Promise<SignedCheckpoint | null> {
    return transaction(this.#pool, "checkpointing the audit record log", async (client) => {
      const state = await this.#lockState(client, logId);
      if (state === null) return null;
      const latest = state.latest_size === null ? null : await checkpointAt(client, logId, Number(state.latest_size));
      const checkpoint = await nextCheckpoint(logId, stateOf(state), latest, signer, now);
      if (checkpoint === null) return null;
      await query(
        client,
        "checkpointing the audit record log",
        "INSERT INTO writ_audit_log_checkpoints (log_id, size, body) VALUES ($1, $2, $3)",
        [logId, checkpoint.size, JSON.stringify(checkpoint)],
      );
      await query(client, "checkpointing the audit record log", "UPDATE writ_audit_log_state SET latest_size = $2 WHERE log_id = $1", [
        logId,
        checkpoint.size,
      ]);
      return checkpoint;
    });
  }

  async stale(before: number): Promise<string[]> {
    const { rows } = await query<{ log_id: string }>(
      this.#pool,
      "reading the audit record log",
      `SELECT log_id FROM ${PENDING} WHERE log_id <> $1 GROUP BY log_id HAVING min(pended_at) < $2 ORDER BY log_id`,
      [this.logId, before],
    );
    return rows.map((r) => r.log_id);
  }

  async logIds(): Promise<string[]> {
    const { rows } = await query<{ log_id: string }>(
      this.#pool,
      "reading the audit record log",
      `SELECT log_id FROM writ_audit_log_state UNION SELECT DISTINCT log_id FROM ${PENDING} ORDER BY log_id`,
    );
    return rows.map((r) => r.log_id);
  }

  counts(logId: string): Promise<LogCounts | null> {
    return this.#reads.counts(logId);
  }

  checkpoints(logId: string, from: number, limit: number): Promise<SignedCheckpoint[]> {
    return this.#reads.checkpoints(logId, from, limit);
  }

  checkpointAt(logId: string, size: number): Promise<SignedCheckpoint | null> {
    return this.#reads.checkpointAt(logId, size);
  }

  async leaves(logId: string, range: LeafRange): Promise<Uint8Array[]> {
    const { rows } = await query<{ leaf: Buffer }>(
      this.#pool,
      "reading the audit record log",
      "SELECT leaf FROM writ_audit_log_entries WHERE log_id = $1 AND position >= $2 AND position < $3 ORDER BY position",
      [logId, range.start, range.end],
    );
    return rows.map((r) => r.leaf);
  }

  async nodes(logId: string, subtrees: readonly PerfectSubtree[]): Promise<Uint8Array[]> {
    const { rows } = await query<{ height: number; idx: string; hash: Buffer }>(
      this.#pool,
      "reading the audit record log",
      "SELECT n.height, n.idx, n.hash FROM writ_audit_log_nodes n JOIN unnest($2::integer[], $3::bigint[]) AS w (height, idx) ON n.height = w.height AND n.idx = w.idx WHERE n.log_id = $1",
      [logId, subtrees.map((s) => s.height), subtrees.map((s) => s.index)],
    );
    const found = new Map(rows.map((r) => [`${r.height}/${r.idx}`, r.hash]));
    return subtrees.map((s) => {
      const hash = found.get(`${s.height}/${s.index}`);
      if (hash === undefined)
        throw new Error(
          `the record log \`${logId}\` has no root of the subtree of height ${s.height} at ${s.index}: its database is damaged`,
        );
      return hash;
    });
  }

  async decisionEntry(executionId: string): Promise<{ readonly logId: string; readonly position: number } | null> {
    const { rows } = await query<{ log_id: string; position: string }>(
      this.#pool,
      "reading the audit record log",
      "SELECT log_id, position FROM writ_audit_log_entries WHERE kind = 'decision' AND ref = $1",
      [executionFingerprint(executionId)],
    );
    return rows[0] === undefined ? null : { logId: rows[0].log_id, position: Number(rows[0].position) };
  }

  entries(logId: string, from: number, to: number): AsyncIterable<StoredEntry> {
    return this.#reads.entries(logId, from, to);
  }

  unlogged(): AsyncIterable<UnloggedRecord> {
    return this.#reads.unlogged();
  }

  /**
   * On the read database, one of its connections for the whole export: every read of the export on one server, though
   * its URL may name several (a balancer over standbys, each behind the primary by its own lag), whose state only moves
   * forward (a standby replays the primary's commits in order), over tables that only grow (log-storage.ts): the
   * entries and checkpoints up to the end the export read first are there for every read after it. Not one transaction:
   * its snapshot would be held while the export waits on its HTTP client, which the idle-in-transaction limit ends
   * (pool.ts), and on a standby a snapshot held for minutes is cancelled by the replay of the primary's vacuum; each
   * statement takes its own. Without a read database, the primary's pool: one server, and no connection of the pool
   * the decisions use is held while a slow client reads.
   */
  async exportSession(): Promise<ExportSession> {
    if (this.#readPool === null) return { reads: this.#reads, end: () => undefined };
    const { client, release } = await checkOut(this.#readPool, `opening an export of the audit record log${ON_READ_DATABASE}`);
    return { reads: new PostgresLogReads(client, this.#templates), end: () => release(false) };
  }

  /**
   * Takes the records stored outside every log (records written while the log was off, imported, or put there by hand)
   * into this sidecar's pending set (pending since `now`), from the candidates of `writ_audit_log_outside`,
   * which it empties: one transaction per page of PAGE candidates, under an advisory lock (one sidecar at a time) and
   * the prune lock (retention cannot remove a record between its reading here and its pending row). Answers how many
   * it took.
   */
  async adoptUnlogged(now: number): Promise<number> {
    const what = "taking unlogged audit records into the record log";
    let adopted = 0;
    for (;;) {
      const seen = await transaction(this.#pool, what, async (client) => {
        await query(client, what, "SELECT pg_advisory_xact_lock(hashtext($1)), pg_advisory_xact_lock(hashtext($2))", [
          ADOPT_LOCK,
          PRUNE_LOCK,
        ]);
        const page = await candidates(
          client,
          this.#templates,
          `DELETE FROM ${OUTSIDE_TABLE} WHERE (kind, ref) IN (SELECT kind, ref FROM ${OUTSIDE_TABLE} ORDER BY kind, ref LIMIT ${PAGE}) RETURNING kind, ref`,
          [],
        );
        const taken = page.filter((c) => c.outside && c.body !== null);
        if (taken.length > 0) {
          const { rowCount } = await query(
            client,
            what,
            `INSERT INTO ${PENDING} (log_id, kind, ref, leaf, pended_at) SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bytea[], $5::bigint[])
             ON CONFLICT (kind, ref) DO NOTHING`,
            [
              this.logId,
              taken.map((r) => r.kind),
              taken.map((r) => r.ref),
              taken.map((r) => Buffer.from(entryLeafHash({ kind: r.kind, record: r.body! }))),
              taken.map(() => now),
            ],
          );
          adopted += rowCount ?? 0;
        }
        return page.length;
      });
      if (seen < PAGE) return adopted;
    }
  }

  /**
   * The state row of `logId`, locked for this transaction (created empty first if the log has none). This sidecar's own
   * log waits for its lock (within the lock timeout); another's is skipped, null, when another session holds its row.
   */
  async #lockState(client: pg.PoolClient, logId: string): Promise<StateRow | null> {
    const own = logId === this.logId;
    const select = `SELECT size, frontier, latest_size FROM writ_audit_log_state WHERE log_id = $1 ${own ? "FOR UPDATE" : "FOR UPDATE SKIP LOCKED"}`;
    const { rows } = await query<StateRow>(client, "locking the audit record log", select, [logId]);
    if (rows[0] !== undefined) return rows[0];
    // Skipped, or absent: a plain read tells which without waiting (`ON CONFLICT` would wait for a change under way).
    if (!own && (await this.#stateExists(client, logId))) return null;
    await query(
      client,
      "locking the audit record log",
      "INSERT INTO writ_audit_log_state (log_id, size, frontier) VALUES ($1, 0, '[]') ON CONFLICT (log_id) DO NOTHING",
      [logId],
    );
    const created = await query<StateRow>(client, "locking the audit record log", select, [logId]);
    return created.rows[0] ?? null;
  }

  async #stateExists(client: pg.PoolClient, logId: string): Promise<boolean> {
    const { rows } = await query<{ found: boolean }>(
      client,
      "locking the audit record log",
      "SELECT EXISTS (SELECT 1 FROM writ_audit_log_state WHERE log_id = $1) AS found",
      [logId],
    );
    return rows[0]?.found === true;
  }
}

function stateOf(row: StateRow): LogState {
  return { size: Number(row.size), frontier: (JSON.parse(row.frontier) as string[]).map(hashFromHex) };
}
