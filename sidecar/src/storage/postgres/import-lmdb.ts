/**
 * `writ-sidecar import-lmdb <data-dir>`: moves one sidecar's embedded state (replay entries, the audit trail and its
 * counters, Surface B's Trust Records in their order) into the fleet's PostgreSQL database (docs/fleet.md, "Moving an
 * LMDB sidecar's data over"), so that nothing it decided is lost or can be decided again.
 *
 * ONE TRANSACTION: everything commits together or nothing does, in chunks of IMPORT_CHUNK rows a statement. The data
 * dir is read read-only and streamed (storage/lmdb/data-dir-export.ts). A key the database already holds keeps the
 * database's row and is counted as a conflict (the procedure, import before the fleet takes traffic, avoids it). A
 * source is imported once: its real path is recorded in `writ_imports`. The imported audit records are in no log: the
 * record log's triggers make each a candidate of `writ_audit_log_outside` (outside-log.ts), and the next sidecar to
 * start with the log on takes them into its own.
 */
import { executionFingerprint } from "@writ/runtime";
import { RECORDS_TABLE, REPLAY_TABLE } from "./tables.js";
import type pg from "pg";
import type { ConfirmationAudit, OverrideAudit } from "../../audit/types.js";
import { openLmdbDataDir, type ExportedCounter } from "../lmdb/data-dir-export.js";
import { query, transaction } from "./connection/query.js";

/** Rows per statement. */
const IMPORT_CHUNK = 500;

export class AlreadyImportedError extends Error {
  override readonly name = "AlreadyImportedError";
  readonly code = "ALREADY_IMPORTED" as const;
  constructor(source: string, at: string) {
    super(`\`${source}\` was already imported into this database on ${at}: nothing was written`);
  }
}

export type ImportKind =
  "replay" | "decisions" | "overrides" | "confirmations" | "verifications" | "security" | "trustRecords" | "trustHistory" | "bundlePins";

export interface ImportCounts {
  /** Rows written, by kind. */
  readonly imported: Readonly<Record<ImportKind, number>>;
  /** Keys the database already held (its row kept), by kind. */
  readonly conflicts: Readonly<Record<ImportKind, number>>;
}

const KINDS: readonly ImportKind[] = [
  "replay",
  "decisions",
  "overrides",
  "confirmations",
  "verifications",
  "security",
  "trustRecords",
  "trustHistory",
  "bundlePins",
];

/**
 * Copies the LMDB environment at `dataDir` into the migrated database of `pool`; `onProgress` is told after each
 * chunk. Throws AlreadyImportedError before writing anything when the source was imported before.
 */
export async function importLmdb(
  pool: pg.Pool,
  dataDir: string,
  onProgress: (kind: ImportKind, rows: number) => void = () => undefined,
): Promise<ImportCounts> {
  const data = openLmdbDataDir(dataDir);
  const { source } = data;
  try {
    return await transaction(pool, "importing an LMDB data dir", async (client) => {
      const { rows } = await query<{ imported_at: Date }>(
        client,
        "importing an LMDB data dir",
        "SELECT imported_at FROM writ_imports WHERE source = $1",
        [source],
      );
      if (rows[0] !== undefined) throw new AlreadyImportedError(source, rows[0].imported_at.toISOString());
      const imported = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<ImportKind, number>;
      const conflicts = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<ImportKind, number>;

      /** Writes `entries` in chunks; answers the keys written when the statement returns them. */
      const copy = async <E>(kind: ImportKind, entries: Iterable<E>, columnsOf: (entry: E) => unknown[]): Promise<string[]> => {
        const written: string[] = [];
        for (const columns of chunked(entries, columnsOf)) {
          const result = await query<{ key: string }>(client, `importing ${kind}`, STATEMENTS[kind], columns);
          const count = result.rowCount ?? 0;
          imported[kind] += count;
          conflicts[kind] += columns[0]!.length - count;
          written.push(...result.rows.map((r) => r.key));
          onProgress(kind, imported[kind]);
        }
        return written;
      };

      await copy("replay", data.replayEntries(), ({ fingerprint, entry: e }) => [
        Buffer.from(fingerprint, "utf8"),
        e.state,
        e.token,
        e.createdAt,
        e.updatedAt,
        e.expiresAt,
        json(e.context),
        json(e.resolution),
      ]);
      await copy("decisions", data.decisions(), ({ recordedAt, decision }) => [
        decision.attestation.execution_fingerprint,
        "decision",
        recordedAt,
        decision.attestation.policyId,
        decision.status,
        JSON.stringify(decision),
      ]);
      const beside: readonly (readonly [ImportKind, Iterable<OverrideAudit | ConfirmationAudit>, string])[] = [
        ["overrides", data.overrides(), "override"],
        ["confirmations", data.confirmations(), "confirmation"],
      ];
      for (const [kind, records, recordKind] of beside) {
        await copy(kind, records, (value) => [
          executionFingerprint(value.executionId),
          recordKind,
          instant(value.recordedAt),
          null,
          null,
          JSON.stringify(value),
        ]);
      }
      await copy("verifications", data.verifications(), ({ recordedAt, verification }) => [recordedAt, JSON.stringify(verification)]);
      await copy("security", data.securityEvents(), ({ at, event }) => {
        // Stored as the PostgreSQL trail stores an event: without its id and time, which the row's columns give.
        const { id: _id, at: _at, ...stored } = event;
        return [at, JSON.stringify(stored)];
      });
      // A Trust Record the database already held keeps its own history: only the imported records' is added.
      const created = new Set(await copy("trustRecords", data.trustRecords(), ({ id, body }) => [id, body]));
      for (const kind of ["verification", "receipt"] as const) {
        await copy(
          "trustHistory",
          filter(data.trustHistory(kind), ({ id }) => created.has(id)),
          ({ id, body }) => [id, kind, body],
        );
      }
      // A version the fleet already pinned keeps the fleet's pin (a conflict, counted): the database decides.
      await copy("bundlePins", data.bundlePins(), ({ policyId, version, bundleHash }) => [policyId, version, bundleHash]);
      await addCounters(client, data.counters());
      await query(client, "importing an LMDB data dir", "INSERT INTO writ_imports (source, counts) VALUES ($1, $2)", [
        source,
        JSON.stringify({ imported, conflicts }),
      ]);
      return { imported, conflicts };
    });
  } finally {
    await data.close();
  }
}

/** What each kind's chunk runs: its column arrays unnested, in the source's order; a key the database holds is kept. */
const RECORDS = `INSERT INTO ${RECORDS_TABLE} (execution_fp, kind, recorded_at, policy_id, status, body)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[])
  ON CONFLICT (execution_fp, kind) DO NOTHING`;
const STATEMENTS: Readonly<Record<ImportKind, string>> = {
  replay: `INSERT INTO ${REPLAY_TABLE} (fingerprint, state, token, created_at, updated_at, expires_at, context, resolution)
    SELECT * FROM unnest($1::bytea[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[], $8::text[])
    ON CONFLICT (fingerprint) DO NOTHING`,
  decisions: RECORDS,
  overrides: RECORDS,
  confirmations: RECORDS,
  verifications:
    "INSERT INTO writ_audit_verifications (recorded_at, body) SELECT t, b FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS v (t, b, n) ORDER BY n",
  security:
    "INSERT INTO writ_audit_security (at, body) SELECT t, b FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS s (t, b, n) ORDER BY n",
  trustRecords: `INSERT INTO writ_trust_records (id, body)
    SELECT i, b FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t (i, b, n) ORDER BY n
    ON CONFLICT (id) DO NOTHING RETURNING id AS key`,
  trustHistory:
    "INSERT INTO writ_trust_history (id, kind, body) SELECT i, k, b FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS h (i, k, b, n) ORDER BY n",
  bundlePins: `INSERT INTO writ_bundle_pins (policy_id, version, bundle_hash)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
    ON CONFLICT (policy_id, version) DO NOTHING`,
};

/** `entries` as the column arrays of chunks of at most IMPORT_CHUNK rows. */
function* chunked<E>(entries: Iterable<E>, columnsOf: (entry: E) => unknown[]): Generator<unknown[][]> {
  let columns: unknown[][] | null = null;
  for (const entry of entries) {
    const values = columnsOf(entry);
    columns ??= values.map(() => []);
    values.forEach((v, i) => columns![i]!.push(v));
    if (columns[0]!.length === IMPORT_CHUNK) {
      yield columns;
      columns = null;
    }
  }
  if (columns !== null) yield columns;
}

function* filter<E>(entries: Iterable<E>, keep: (entry: E) => boolean): Generator<E> {
  for (const entry of entries) if (keep(entry)) yield entry;
}

/** The counters of `/audit/stats` that outlive retention, added to the database's. */
async function addCounters(client: pg.PoolClient, counters: Iterable<ExportedCounter>): Promise<void> {
  for (const { name, value } of counters) {
    await query(
      client,
      "importing the audit counters",
      "INSERT INTO writ_audit_counters (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = writ_audit_counters.value + EXCLUDED.value",
      [name, value],
    );
  }
}

function json(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

/** Where a record sorts in time; a malformed `recordedAt` (never one the runtime signs) sorts first. */
function instant(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : 0;
}
