/**
 * The entries of the LMDB record log as an export reads them (record-log-storage.ts `entries`): in pages of EXPORT_PAGE
 * entries, each page's entries and records read into memory by a thread of libuv's pool while the page before is served
 * (`readAhead`): an export of any length holds no read transaction for long, and its reads of a store larger than
 * memory wait on the disk off the event loop, never on it, and no faster than its DiskReadPacer allows.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { isLogEntryKind, type LogEntryKind } from "@writ/runtime";
import type { StoredEntry } from "../../audit/record-log/log-storage.js";
import { LOCATOR_KIND } from "../../audit/record-log/locator.js";
import { prefetched } from "./prefetch.js";
import type { DiskReadPacer } from "./read-pacer.js";
import { HASH, type LogDatabases } from "./record-log-databases.js";
import type { LoggedTrail } from "./logged-trail.js";

/** Log entries an export reads, and prefetches, at a time: 256 records of 4 KB or so, a megabyte. */
const EXPORT_PAGE = 256;

/** An entry of the log as an export reads it, before its record. */
interface LocatedEntry {
  readonly position: number;
  readonly kind: LogEntryKind;
  readonly leaf: Buffer;
  readonly locator: string;
}

/** The entries at positions [from, to) with their records (null: removed), in order; each page read once `pacer` allows. */
export async function* exportedEntries(
  dbs: LogDatabases,
  trail: LoggedTrail,
  from: number,
  to: number,
  pacer: Pick<DiskReadPacer, "owedMs"> | null,
): AsyncGenerator<StoredEntry> {
  let ahead = from < to ? readAhead(dbs, trail, from, to) : null;
  for (let start = from; ahead !== null; start += EXPORT_PAGE) {
    const page = await ahead;
    const owed = pacer?.owedMs() ?? 0;
    if (owed > 0) await sleep(owed);
    ahead = start + EXPORT_PAGE < to ? readAhead(dbs, trail, start + EXPORT_PAGE, to) : null;
    // An abandoned export leaves no rejection unhandled.
    ahead?.catch(() => undefined);
    for (const { position, leaf, locator, kind } of page) {
      const raw = trail.raw(locator);
      yield { position, kind, leaf, record: raw === undefined ? null : raw.toString("utf8") };
    }
  }
}

/** The entries at positions [start, min(start + EXPORT_PAGE, to)), with their records' pages prefetched. */
async function readAhead(dbs: LogDatabases, trail: LoggedTrail, start: number, to: number): Promise<readonly LocatedEntry[]> {
  const end = Math.min(start + EXPORT_PAGE, to);
  // Positions are dense (0 to size − 1): the page's keys are known before it is read.
  await prefetched(
    dbs.root,
    dbs.entries,
    Array.from({ length: end - start }, (_, i) => start + i),
  );
  const page = Array.from(dbs.entries.getRange({ start, end }), ({ key: position, value }): LocatedEntry => {
    const locator = value.subarray(HASH).toString("utf8");
    const kind = LOCATOR_KIND[locator[0]!];
    if (kind === undefined || !isLogEntryKind(kind))
      throw new Error(`the record log's entry ${position} names no record (\`${locator}\`): its store is damaged`);
    return { position, kind, leaf: value.subarray(0, HASH), locator };
  });
  await trail.prefetch(page.map((entry) => entry.locator));
  return page;
}
