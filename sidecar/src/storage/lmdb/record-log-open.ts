/**
 * Opening the LMDB record log (record-log-storage.ts): its format checked, its id made once and kept, and this
 * process's open mark left in `audit-log-meta` (`open:<id>`, audit/record-log/open-marks.ts) in the same write
 * transaction, where another live process's mark, or the data dir's lock held by another process, refuses the open
 * (the header's ONE OWNER); a process of a sidecar of several opens beside its live siblings (the header's SHARED). A
 * mark stays until its process closes the log with nothing left to look for; a mark whose process is gone (it
 * crashed, or a release that held records in memory crashed) makes the next open look for the records the log lacks
 * (record-log-accounting.ts).
 */
import { randomUUID } from "node:crypto";
import type { Database, RootDatabase } from "lmdb";
import { describeMark, markIsStale, ownMark, type OpenMark } from "../../audit/record-log/open-marks.js";
import { InstanceInUseError } from "../instance-in-use.js";
import { LOCK_FILE } from "./data-dir-lock.js";
import { RECORD_LOG_DATABASES, type LogDatabases } from "./record-log-databases.js";
import { pages } from "./pages.js";

/** The layout of record-log-storage.ts. A data dir whose log has another format is refused at open, never read as this one. */
const FORMAT = 3;
/** The format before open marks: the same databases, so it is taken over by writing the new format number. */
const FORMAT_WITHOUT_MARKS = 2;
const MARK_PREFIX = "open:";

/** A key for this process's open mark. */
export function newMark(): string {
  return `${MARK_PREFIX}${randomUUID()}`;
}

/**
 * In one write transaction: the format checked (and taken over from FORMAT_WITHOUT_MARKS), `pruned` counted once for a
 * log written before it was kept, `mark` left unless another process owns the data dir, and the log's id answered: the
 * one kept, or `configured` (else a random UUID) made now. `held`: whether this process holds the data dir's lock.
 * `group`: for a process of a sidecar of several, its supervisor (open-marks.ts `groupOf`): the live processes of the
 * same group may have the data dir open, and one of them holds the lock when this one does not.
 * @throws InstanceInUseError when another live process has the data dir open; Error when the log has another format, or
 *   another id than `configured`
 */
export function openLog(dbs: LogDatabases, mark: string, held: boolean, configured: string | null, group: string | null = null): string {
  return dbs.root.transactionSync(() => {
    const format = dbs.meta.get("format");
    const known = dbs.meta.get("logId");
    if (format === undefined && dbs.meta.get("state") !== undefined) {
      throw new Error(
        "the audit record log in this data dir was written by a development version of writ whose leaves are hashed otherwise: remove its `audit-log-*` databases, or run with SERVICE_AUDIT_LOG=off",
      );
    }
    if (format !== undefined && format !== FORMAT && format !== FORMAT_WITHOUT_MARKS) {
      throw new Error(
        `the audit record log in this data dir has format ${String(format)}, not ${FORMAT}: run the writ release that wrote it`,
      );
    }
    if (format !== FORMAT) dbs.meta.putSync("format", FORMAT);
    // A log written before `pruned` was kept: counted once from its prune notes (one read per note).
    if (dbs.meta.get("pruned") === undefined) dbs.meta.putSync("pruned", countPrunedPositions(dbs));
    // In the write transaction that leaves this process's mark: of two processes opening the data dir at once, the
    // second sees the first's mark.
    const owner = liveOwner(dbs, mark, held, group);
    if (owner !== null) {
      throw new InstanceInUseError(
        typeof known === "string" ? known : (configured ?? "(not named yet)"),
        owner,
        "give each sidecar its own data dir (SERVICE_DATA_DIR), and its own SERVICE_INSTANCE_ID if set",
      );
    }
    dbs.meta.putSync(mark, ownMark(group));
    if (typeof known === "string") {
      if (configured !== null && configured !== known) {
        throw new Error(
          `SERVICE_INSTANCE_ID is \`${configured}\`, but this data dir's audit record log is \`${known}\`: the id of a data dir's log never changes (unset SERVICE_INSTANCE_ID, or set it to \`${known}\`)`,
        );
      }
      return known;
    }
    const made = configured ?? randomUUID();
    dbs.meta.putSync("logId", made);
    return made;
  });
}

/** The open marks of processes gone without closing (open-marks.ts), other than `mark`. */
export function crashedMarks(dbs: LogDatabases, mark: string): string[] {
  const crashed: string[] = [];
  for (const { key, mark: other } of otherMarks(dbs, mark)) if (markIsStale(other)) crashed.push(key);
  return crashed;
}

/**
 * Whether a live process of `group` (open-marks.ts `groupOf`) has the data dir of `root` open: the log's keeper, or
 * one that takes the lock once it is free.
 */
export function siblingOpen(root: RootDatabase, group: string): boolean {
  for (const { mark } of openMarks(root)) if (mark.group === group && !markIsStale(mark)) return true;
  return false;
}

/** The open marks left in the data dir of `root`, live or not, with their keys. */
export function openMarks(root: RootDatabase): Generator<{ readonly key: string; readonly mark: OpenMark }> {
  return marksIn(root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" }));
}

/** The log stops being complete: records are about to be written without it (SERVICE_AUDIT_LOG=off). */
export function markIncomplete(root: RootDatabase): void {
  const meta = root.openDB<unknown, string>(RECORD_LOG_DATABASES.meta, { encoding: "json" });
  if (meta.get("complete") !== undefined) root.transactionSync(() => meta.removeSync("complete"));
}

/**
 * Another live process with the data dir open (another sidecar), as the refusal names it, if any: its log is not this
 * one's to take. The lock's holder, named by its mark when the mark tells; or a live process's mark without the lock.
 * A live process of `group` is a sibling, not another sidecar: without the lock, one must be there (the lock's holder).
 */
function liveOwner(dbs: LogDatabases, mark: string, held: boolean, group: string | null): string | null {
  let sibling = false;
  for (const { mark: other } of otherMarks(dbs, mark)) {
    if (markIsStale(other)) continue;
    if (group !== null && other.group === group) sibling = true;
    else return `${describeMark(other)} has this data dir open`;
  }
  return held || sibling ? null : `another process holds the data dir's lock (${LOCK_FILE})`;
}

/** The open marks of other processes than the one of `mark`, live or not, with their keys. */
function* otherMarks(dbs: LogDatabases, mark: string): Generator<{ readonly key: string; readonly mark: OpenMark }> {
  for (const other of marksIn(dbs.meta)) if (other.key !== mark) yield other;
}

function* marksIn(meta: Database<unknown, string>): Generator<{ readonly key: string; readonly mark: OpenMark }> {
  for (const { key, value } of meta.getRange({ start: MARK_PREFIX, end: `${MARK_PREFIX}\uffff` })) yield { key, mark: value as OpenMark };
}

/** The positions listed by every prune note. */
function countPrunedPositions(dbs: LogDatabases): number {
  let pruned = 0;
  for (const { value } of pages(dbs.prunes))
    pruned += (JSON.parse(value.toString("utf8")) as { positions: readonly number[] }).positions.length;
  return pruned;
}
