/**
 * A pool whose every statement is first run under `EXPLAIN (ANALYZE)` at the same point of the same session, then
 * rolled back (to a savepoint inside a transaction, or a transaction of its own outside one), and then run for real: a
 * test at volume sees the plan each statement of a store really gets with the data as it is at that moment, the rows
 * each of its scans read, and the sequential scans the statement and its triggers made (`pg_stat_xact_user_tables`).
 * Work is counted, not timed.
 */
import type pg from "pg";
import { testPool } from "../../../../test/support/postgres.js";

/** A scan of the plan, with what it did over all of its loops. */
export interface Scan {
  readonly node: string;
  /** The table scanned, or for an index alone (a bitmap index scan) the index. */
  readonly relation: string;
  readonly loops: number;
  /** Rows returned or filtered out. */
  readonly rows: number;
  /** Shared buffers it touched itself (hit or read), its children's not included. */
  readonly blocks: number;
}

export interface ExplainedStatement {
  readonly text: string;
  readonly scans: readonly Scan[];
  /** Per table, the sequential scans counted while the statement ran, its triggers' included. */
  readonly seqScans: ReadonlyMap<string, number>;
}

interface PlanNode {
  readonly "Node Type": string;
  readonly "Relation Name"?: string;
  readonly "Index Name"?: string;
  readonly "Shared Hit Blocks"?: number;
  readonly "Shared Read Blocks"?: number;
  readonly "Actual Rows"?: number;
  readonly "Actual Loops"?: number;
  readonly "Rows Removed by Filter"?: number;
  readonly "Rows Removed by Index Recheck"?: number;
  readonly Plans?: readonly PlanNode[];
}

const SCANS = new Set(["Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan", "Bitmap Index Scan", "Tid Scan", "Tid Range Scan"]);
/** Transaction control and session commands: nothing to explain. */
const UNEXPLAINED = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|SET|SHOW)\b/i;

function walk(node: PlanNode, visit: (node: PlanNode) => void): void {
  visit(node);
  for (const child of node.Plans ?? []) walk(child, visit);
}

const blocksOf = (node: PlanNode): number => (node["Shared Hit Blocks"] ?? 0) + (node["Shared Read Blocks"] ?? 0);

function explained(
  text: string,
  plan: PlanNode,
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
): ExplainedStatement {
  const scans: Scan[] = [];
  walk(plan, (node) => {
    const relation = node["Relation Name"] ?? node["Index Name"];
    if (relation === undefined || !SCANS.has(node["Node Type"])) return;
    const loops = node["Actual Loops"] ?? 1;
    const perLoop = (node["Actual Rows"] ?? 0) + (node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Index Recheck"] ?? 0);
    const own = blocksOf(node) - (node.Plans ?? []).reduce((sum, child) => sum + blocksOf(child), 0);
    scans.push({ node: node["Node Type"], relation, loops, rows: perLoop * loops, blocks: own });
  });
  const seqScans = new Map<string, number>();
  for (const [relation, count] of after)
    if (count > (before.get(relation) ?? 0)) seqScans.set(relation, count - (before.get(relation) ?? 0));
  return { text, scans, seqScans };
}

type Run = (text: string, values?: readonly unknown[]) => Promise<pg.QueryResult>;

async function seqScanCounts(run: Run): Promise<Map<string, number>> {
  const { rows } = await run("SELECT relname, seq_scan FROM pg_stat_xact_user_tables");
  return new Map(rows.map((r: { relname: string; seq_scan: string }) => [r.relname, Number(r.seq_scan)]));
}

/** `url`'s database through a pool that explains each statement into `statements` before running it. */
export function explainedPool(url: string): { readonly pool: pg.Pool; readonly statements: ExplainedStatement[] } {
  const statements: ExplainedStatement[] = [];
  const pool = testPool(url);
  pool.on("connect", (client) => {
    const original = client.query.bind(client) as unknown as (config: unknown, values?: unknown) => Promise<pg.QueryResult>;
    const run: Run = (text, values) => original(text, values);
    let inTransaction = false;
    const explain = async (text: string, values: readonly unknown[] | undefined): Promise<void> => {
      const [open, close] = inTransaction ? ["SAVEPOINT explained", "ROLLBACK TO SAVEPOINT explained"] : ["BEGIN", "ROLLBACK"];
      await run(open);
      try {
        const before = await seqScanCounts(run);
        const { rows } = await run(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values);
        const after = await seqScanCounts(run);
        statements.push(explained(text, (rows[0] as { "QUERY PLAN": [{ Plan: PlanNode }] })["QUERY PLAN"][0].Plan, before, after));
      } finally {
        await run(close);
      }
    };
    const query = async (config: unknown, values?: unknown): Promise<pg.QueryResult> => {
      const text = typeof config === "string" ? config : (config as { text: string }).text;
      const parameters = (typeof config === "string" ? values : ((config as { values?: unknown }).values ?? values)) as
        readonly unknown[] | undefined;
      if (!UNEXPLAINED.test(text)) await explain(text, parameters);
      if (/^\s*BEGIN\b/i.test(text)) inTransaction = true;
      if (/^\s*(COMMIT|ROLLBACK)\b/i.test(text)) inTransaction = false;
      return original(config, values);
    };
    // The pool calls `query(text, values, callback)`; stores call it with a promise.
    (client as unknown as { query: unknown }).query = (
      config: unknown,
      values?: unknown,
      callback?: unknown,
    ): Promise<pg.QueryResult> | undefined => {
      const done = typeof values === "function" ? values : callback;
      const result = query(config, typeof values === "function" ? undefined : values);
      if (typeof done !== "function") return result;
      result.then(
        (r) => (done as (e: unknown, r?: pg.QueryResult) => void)(null, r),
        (e: unknown) => (done as (e: unknown) => void)(e),
      );
      return undefined;
    };
  });
  return { pool, statements };
}
