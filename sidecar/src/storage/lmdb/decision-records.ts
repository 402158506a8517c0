/**
 * `audit-decision-records`, compressed when SERVICE_AUDIT_COMPRESSION is on (docs/running-for-years.md, "Compressed
 * records"): each decision record is then stored LZ4-compressed with a dictionary by lmdb-js (`compression`), so that
 * several records share a page where each took one of its own (cost: docs/benchmarks.md, "Record pages"). Every opener
 * of the database opens it here, with the same dictionary: a record read with another would decompress into other
 * bytes. Records stored before compression read as they are (docs/storage-engines.md, "What the LMDB engine works
 * around in lmdb-js"), and `getBinary` answers a compressed record's exact bytes, which the record log hashes.
 *
 * THE DATA DIR'S DICTIONARY (`audit-record-compression`, key `decision-records`): the first open with compression on
 * stores the shipped one (decision-dictionary.ts), and every later open reads its records with that one. An open is
 * refused, saying why, when the stored value has an unknown format, is damaged, or is missing while records are compressed.
 */
import type { Database, RootDatabase } from "lmdb";
import { SHIPPED_DICTIONARY, type RecordDictionary } from "./decision-dictionary.js";
import { hasDatabase } from "./named-databases.js";
import { RecordTemplates } from "./record-templates.js";

export const DECISION_RECORDS_DATABASE = "audit-decision-records";
export const RECORD_COMPRESSION_DATABASE = "audit-record-compression";
const DICTIONARY_KEY = "decision-records";
/** How the records are compressed: lmdb-js 3's LZ4 block with the dictionary stored beside them. */
const COMPRESSION_FORMAT = 1;
/** Values of this many bytes or more are compressed: every decision record. */
const COMPRESSION_THRESHOLD = 100;
/** A threshold no record reaches (LMDB values are at most 4 GB): nothing is compressed. */
const NEVER = 2 ** 32;
/** lmdb-js's mark of a compressed value: its first byte is 250 or more (254 and 255 are written). */
const COMPRESSED_MARK = 250;

/** The dictionary as the data dir stores it. */
interface StoredDictionary {
  readonly format: number;
  readonly id: string;
  /** Base64. */
  readonly dictionary: string;
}

/** What a writer of records asks: whether the records it writes are compressed, and the dictionary this release ships. */
export interface DecisionRecordsOptions {
  /** SERVICE_AUDIT_COMPRESSION: the records written from now on are compressed; default false. */
  readonly compress?: boolean;
  /** The dictionary stored at the first compressed open of a data dir; default SHIPPED_DICTIONARY. */
  readonly shipped?: RecordDictionary;
}

/**
 * The lmdb-js `compression` option of records read with `dictionary`: values of COMPRESSION_THRESHOLD bytes or more
 * written compressed, or none (`compressing` false: lmdb-js compresses a value only from its threshold on, or when its
 * first byte is a mark, which no JSON text has).
 */
export function compressionWith(
  dictionary: RecordDictionary,
  compressing = true,
): { readonly dictionary: Buffer; readonly threshold: number } {
  return { dictionary: dictionary.bytes, threshold: compressing ? COMPRESSION_THRESHOLD : NEVER };
}

/**
 * The decision records, opened to read every record the data dir holds, and to write new ones compressed when
 * `compress` is on (SERVICE_AUDIT_COMPRESSION):
 * - compress on: with the data dir's dictionary, or the shipped one, which it then stores (not in a read-only
 *   environment, the export of a stopped sidecar's data dir: data-dir-export.ts, which never writes);
 * - compress off: with the data dir's dictionary when it has one (records compressed while it was on stay readable),
 *   writing none compressed; as plain JSON when it has none.
 * @throws Error when the data dir's dictionary is of an unknown format or damaged, or missing while records are compressed
 */
export function openDecisionRecords<V, K extends [number, string]>(
  root: RootDatabase,
  { compress = false, shipped = SHIPPED_DICTIONARY }: DecisionRecordsOptions = {},
): Database<V, K> {
  const compressing = compress && (root as { readOnly?: boolean }).readOnly !== true;
  const dictionary = compressing ? keptDictionary(root, shipped) : storedDictionary(root);
  const templates = RecordTemplates.of(root);
  // `encoder` (lmdb-js's custom encoding) is not in its DatabaseOptions type.
  const options = {
    // JSON for what is put as a value (the trail puts its bytes as they are: stored-bytes.ts); coded records read as JSON.
    encoder: {
      encode: (value: unknown) => Buffer.from(JSON.stringify(value), "utf8"),
      decode: (bytes: Buffer) => JSON.parse(templates.text(bytes)) as unknown,
      // Handed a value's own bytes: lmdb-js's shared read buffer is longer than the value.
      needsStableBuffer: true,
    },
    ...(dictionary === null ? {} : { compression: compressionWith(dictionary, compressing) }),
  };
  return root.openDB<V, K>(DECISION_RECORDS_DATABASE, options);
}

/** The stored dictionary, or `shipped` stored in the transaction that found none. */
function keptDictionary(root: RootDatabase, shipped: RecordDictionary): RecordDictionary {
  const meta = root.openDB<unknown, string>(RECORD_COMPRESSION_DATABASE, { encoding: "json" });
  const raw = root.openDB<Buffer, [number, string]>(DECISION_RECORDS_DATABASE, { encoding: "binary" });
  return root.transactionSync(() => {
    const stored = meta.get(DICTIONARY_KEY);
    if (stored !== undefined) return parsed(stored);
    refuseCompressed(raw);
    const value: StoredDictionary = { format: COMPRESSION_FORMAT, id: shipped.id, dictionary: shipped.bytes.toString("base64") };
    meta.putSync(DICTIONARY_KEY, value);
    return shipped;
  });
}

/** The stored dictionary, or null when there is none (and so no compressed record). */
function storedDictionary(root: RootDatabase): RecordDictionary | null {
  const stored = hasDatabase(root, RECORD_COMPRESSION_DATABASE)
    ? root.openDB<unknown, string>(RECORD_COMPRESSION_DATABASE, { encoding: "json" }).get(DICTIONARY_KEY)
    : undefined;
  if (stored !== undefined) return parsed(stored);
  if (hasDatabase(root, DECISION_RECORDS_DATABASE)) refuseCompressed(root.openDB(DECISION_RECORDS_DATABASE, { encoding: "binary" }));
  return null;
}

/** The stored dictionary, checked. */
function parsed(stored: unknown): RecordDictionary {
  const value = stored as Partial<StoredDictionary> | null;
  if (typeof value?.format === "number" && value.format !== COMPRESSION_FORMAT) {
    throw new Error(
      `the decision records in this data dir are compressed in format ${value.format}, not ${COMPRESSION_FORMAT}: run the writ release that wrote them, or a later one`,
    );
  }
  if (value?.format !== COMPRESSION_FORMAT || typeof value.id !== "string" || typeof value.dictionary !== "string") {
    throw new Error(
      `the dictionary of this data dir's decision records (\`${DICTIONARY_KEY}\` in \`${RECORD_COMPRESSION_DATABASE}\`) is damaged: restore the data dir from a backup`,
    );
  }
  return { id: value.id, bytes: Buffer.from(value.dictionary, "base64") };
}

/**
 * Refuses records that cannot be read: with no dictionary stored, none was ever written compressed, so a compressed
 * oldest or newest record (read as stored: two reads, whatever the trail's size) means the dictionary was lost.
 */
function refuseCompressed(raw: Database<Buffer, [number, string]>): void {
  for (const reverse of [false, true]) {
    for (const { value } of raw.getRange({ reverse, limit: 1 })) {
      if ((value[0] ?? 0) >= COMPRESSED_MARK) {
        throw new Error(
          `the decision records in this data dir are compressed, but its dictionary (\`${DICTIONARY_KEY}\` in \`${RECORD_COMPRESSION_DATABASE}\`) is missing: they cannot be read without it; restore the data dir from a backup`,
        );
      }
    }
  }
}
