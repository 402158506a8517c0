/**
 * What the `/audit/log` routes read from a trail's tamper-evident record log (docs/audit.md, "Tamper evidence").
 * Implemented on LMDB (lmdb-record-log.ts, through `LmdbAuditLog.recordLog`).
 */
import type { ExportLine, SignedCheckpoint } from "@writ/runtime";
import type { ConsistencyProofJson, InclusionProofJson } from "@writ/wire";
import type { RecordLogStatus } from "./lmdb-record-log.js";

export type { ExportLine, RecordLogStatus };

export interface RecordLog {
  /** The sidecar instance's log id (made once per data dir): `instanceId` in `GET /health`. */
  readonly logId: string;
  status(): RecordLogStatus;
  /** Checkpoints with `size` at least `from`, oldest first. */
  checkpoints(from: number, limit: number): SignedCheckpoint[];
  checkpointAt(size: number): SignedCheckpoint | null;
  /** The decision of `executionId` against the checkpoint at `size` (default: the latest); null when not covered. */
  decisionInclusionProof(executionId: string, size?: number): Promise<InclusionProofJson | null>;
  consistencyProof(from: number, to: number): ConsistencyProofJson | null;
  /** @throws RangeError when `from` is not 0 or a checkpoint's size */
  export(from: number): Iterable<ExportLine>;
  /** Sequences what is pending and signs a checkpoint now (null: nothing new, or no signing key). */
  checkpointNow(): Promise<SignedCheckpoint | null>;
}
