/**
 * A `policyId` filter longer than any policy id never reaches the store (docs/audit.md, "Query parameters"). Found from
 * outside: `GET /audit/decisions?policyId=<1,960+ characters>` with the reading key answered 500, because the filter
 * index lookup threw on a key over LMDB's 1,978 bytes, and left its read transaction open for good; LMDB then could not
 * reuse the pages freed after that snapshot, data.mdb grew about 5× faster than its live data, and after about 130
 * such requests every audit read failed. Here 1,000 such requests, with decisions written before, between and after
 * them (the environment is live, so a pinned snapshot would show), must be 1,000 × 400, leave LMDB's reader table as
 * it was, and grow data.mdb no more than the same writes without them.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { open, type RootDatabase } from "lmdb";
import { afterAll, beforeAll, expect, it } from "vitest";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { evaluate, startE2eSidecar, type E2eSidecar } from "../support/e2e.js";

const READ_KEY = "h3-read-key-0123456789abcdefghij";
const DECIDE_KEY = "h3-decide-key-0123456789abcdefgh";
const QUERIES = 1_000;
/** A decision is written after every this many queries: 50 in all, as many as the run without queries writes. */
const WRITE_EVERY = 20;
const WRITES = QUERIES / WRITE_EVERY;

let s: E2eSidecar;
/** The sidecar's LMDB environment, opened a second time in this process (lmdb-js shares the one environment). */
let env: RootDatabase;
beforeAll(async () => {
  s = await startE2eSidecar({ SERVICE_READ_KEY: READ_KEY, SERVICE_DECIDE_KEY: DECIDE_KEY });
  env = open({ path: s.dataDir, maxDbs: 32, noSubdir: false });
});
afterAll(async () => {
  await s.close();
  await env.close();
});

const dataFileSize = async () => (await stat(join(s.dataDir, "data.mdb"))).size;

/**
 * The readers of LMDB's reader table that hold a snapshot: a row whose `txnid` is a number (a reader slot kept for
 * reuse between transactions shows `-`).
 */
function snapshotsHeld(): string[] {
  return env
    .readerList()
    .split("\n")
    .slice(1)
    .filter((row) => /\s\d+\s*$/.test(row));
}

async function writeDecisions(count: number): Promise<void> {
  for (let i = 0; i < count; i++) expect((await evaluate(s, TRANSFER_SIGNALS.approved)).status).toBe(200);
}

it(`${QUERIES.toLocaleString("en-US")} GET /audit/decisions?policyId=<2,000 characters> are 400s, leak no LMDB reader and do not grow data.mdb`, async () => {
  await writeDecisions(WRITES);
  const start = await dataFileSize();
  await writeDecisions(WRITES);
  const withoutQueries = (await dataFileSize()) - start;
  const readersBefore = snapshotsHeld();
  const beforeQueries = await dataFileSize();

  const statuses = new Map<number, number>();
  let first: unknown;
  for (let i = 1; i <= QUERIES; i++) {
    const r = await s.send("GET", `/audit/decisions?policyId=${"a".repeat(2_000)}`, { headers: { authorization: `Bearer ${READ_KEY}` } });
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    first ??= r.body;
    if (i % WRITE_EVERY === 0) await writeDecisions(1);
  }
  const withQueries = (await dataFileSize()) - beforeQueries;

  expect(Object.fromEntries(statuses)).toEqual({ 400: QUERIES });
  expect(first).toEqual({
    error: "Invalid request",
    details: [{ path: "querystring", message: "querystring/policyId must NOT have more than 128 characters" }],
  });
  expect(snapshotsHeld()).toEqual(readersBefore);
  // The same writes grow the file by about the same amount with or without the queries between them: page reuse
  // varies by a few pages, which is much of the 50 writes' growth now that a decision's record is small, hence the
  // 16 pages of slack. A reader leaked by each query keeps every page freed after it, so each write takes fresh
  // pages along its whole path in every database: hundreds of pages more, far beyond the slack.
  expect(withQueries).toBeLessThanOrEqual(withoutQueries * 1.5 + 16 * (env.getStats() as { pageSize: number }).pageSize);
  // Audit reads still work, and find the decisions.
  const list = await s.send<unknown[]>("GET", "/audit/decisions?limit=500", { headers: { authorization: `Bearer ${READ_KEY}` } });
  expect(list.status).toBe(200);
  expect(list.body).toHaveLength(3 * WRITES);
});
