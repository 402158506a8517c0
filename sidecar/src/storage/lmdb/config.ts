/**
 * The LMDB engine's settings (`SERVICE_STORE=lmdb`, the embedded default): one environment in the data dir. Without a
 * data dir only the development memory replay store (or none) is available, and nothing is audited.
 */
import { ConfigError, flag, integer, oneOf, text, type Env } from "../../env.js";
import type { EngineSettings } from "../engine-settings.js";
import { DEFAULT_EXPORT_DISK_READS } from "./read-pacer.js";

export interface LmdbStorageConfig {
  readonly kind: "lmdb";
  /** The LMDB environment's directory: SERVICE_DATA_DIR; null: none (development without a data dir). */
  readonly dataDir: string | null;
  /** SERVICE_REPLAY_STORE: `lmdb` in the data dir, `memory` (development: forgotten at restart) or `none` (fail closed). */
  readonly replay: "lmdb" | "memory" | "none";
  /**
   * SERVICE_AUDIT_COMPRESSION: the decision records written from now on are compressed (decision-records.ts), for
   * less disk at more CPU a decision (docs/running-for-years.md, "Compressed records"); off by default.
   */
  readonly compressRecords: boolean;
  /**
   * SERVICE_AUDIT_RECORD_CODING: `templates` (the default) stores each decision record coded against a template of its
   * shape, in a fraction of its JSON (audit/record-coding.ts); `json` stores the JSON text.
   */
  readonly codeRecords: boolean;
  /** SERVICE_DATA_DIR_RESERVE: the free space below which writes are refused (free-space.ts `reserveBytes`). */
  readonly reserve: DataDirReserve;
  /** SERVICE_EXPORT_DISK_READS: an export's disk reads a second at most (read-pacer.ts); null (`0`): unbounded. */
  readonly exportDiskReads: number | null;
}

/** A reserve as set: bytes, or a percent of the data dir's file system; `default` when unset. */
export type DataDirReserve = "default" | { readonly bytes: number } | { readonly percent: number };

const RESERVE_UNITS: Readonly<Record<string, number>> = { "": 1, B: 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 };
/** A share of the disk past this is surely a mistake (a reserve that refuses every write). */
const MAX_RESERVE_PERCENT = 50;

/** @throws ConfigError naming SERVICE_DATA_DIR_RESERVE and what it takes */
function reserveOf(env: Env): DataDirReserve {
  const value = text(env, "SERVICE_DATA_DIR_RESERVE");
  if (value === undefined) return "default";
  const percent = /^(\d+(?:\.\d+)?)%$/.exec(value);
  if (percent !== null && Number(percent[1]) <= MAX_RESERVE_PERCENT) return { percent: Number(percent[1]) };
  const size = /^(\d+)(?:([KMGT])(?:i?B)?|(B))?$/.exec(value);
  const bytes = size === null ? NaN : Number(size[1]) * RESERVE_UNITS[size[2] ?? size[3] ?? ""]!;
  if (!Number.isSafeInteger(bytes)) {
    throw new ConfigError(
      `SERVICE_DATA_DIR_RESERVE must be a size (\`512M\`, \`512MiB\`, \`2G\`: binary units; \`0\`: none) or a share of the data dir's disk up to ${MAX_RESERVE_PERCENT}% (\`5%\`), not \`${value}\``,
    );
  }
  return { bytes };
}

export const LMDB_SETTINGS: EngineSettings<LmdbStorageConfig> = {
  kind: "lmdb",
  variables: ["SERVICE_AUDIT_COMPRESSION", "SERVICE_AUDIT_RECORD_CODING", "SERVICE_DATA_DIR_RESERVE", "SERVICE_EXPORT_DISK_READS"],
  what: "data dir",
  parse(env, { dataDir }) {
    const replay = oneOf(env, "SERVICE_REPLAY_STORE", ["lmdb", "memory", "none"], dataDir === null ? "none" : "lmdb");
    if (replay === "lmdb" && dataDir === null) {
      throw new ConfigError("SERVICE_REPLAY_STORE is `lmdb` but SERVICE_DATA_DIR is not set: the LMDB store needs a directory");
    }
    return {
      kind: "lmdb",
      dataDir,
      replay,
      compressRecords: flag(env, "SERVICE_AUDIT_COMPRESSION", false),
      codeRecords: oneOf(env, "SERVICE_AUDIT_RECORD_CODING", ["templates", "json"], "templates") === "templates",
      reserve: reserveOf(env),
      exportDiskReads: integer(env, "SERVICE_EXPORT_DISK_READS", DEFAULT_EXPORT_DISK_READS, 0, 1_000_000) || null,
    };
  },
  auditRefusal: ({ dataDir }) =>
    dataDir === null ? "SERVICE_AUDIT is on but SERVICE_DATA_DIR is not set: the audit trail needs a directory" : null,
  processesRefusal: ({ replay }) =>
    replay === "memory"
      ? "the development memory replay store is one process's (SERVICE_REPLAY_STORE=memory): an execution could be consumed once in each; set SERVICE_REPLAY_STORE=lmdb"
      : null,
};
