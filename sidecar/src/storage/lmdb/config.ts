/**
 * The LMDB engine's settings (`SERVICE_STORE=lmdb`, the embedded default): one environment in the data dir. Without a
 * data dir only the development memory replay store (or none) is available, and nothing is audited.
 */
import { ConfigError, flag, oneOf } from "../../env.js";
import type { EngineSettings } from "../engine-settings.js";

export interface LmdbStorageConfig {
  readonly kind: "lmdb";
  /** The LMDB environment's directory: SERVICE_DATA_DIR; null: none (development without a data dir). */
  readonly dataDir: string | null;
  /** SERVICE_REPLAY_STORE: `lmdb` in the data dir, `memory` (development: forgotten at restart) or `none` (fail closed). */
  readonly replay: "lmdb" | "memory" | "none";
  /**
   * SERVICE_AUDIT_COMPRESSION: the decision records written from now on are compressed (decision-records.ts), at
   * about 7% more instructions a decision for half the disk a decision (docs/running-for-years.md); off by default.
   */
  readonly compressRecords: boolean;
  /**
   * SERVICE_AUDIT_RECORD_CODING: `templates` (the default) stores each decision record coded against a template of its
   * shape, in about a quarter of its JSON (audit/record-coding.ts); `json` stores the JSON text.
   */
  readonly codeRecords: boolean;
}

export const LMDB_SETTINGS: EngineSettings<LmdbStorageConfig> = {
  kind: "lmdb",
  variables: ["SERVICE_AUDIT_COMPRESSION", "SERVICE_AUDIT_RECORD_CODING"],
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
    };
  },
  auditRefusal: ({ dataDir }) =>
    dataDir === null ? "SERVICE_AUDIT is on but SERVICE_DATA_DIR is not set: the audit trail needs a directory" : null,
};
