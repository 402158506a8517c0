/**
 * The export of an audit log (docs/audit.md, "Export"): NDJSON, one JSON object per line, in this order:
 *
 * 1. `{"type":"start", "logId", "size", "frontier", "checkpoint"}`: where the export starts. `size` 0 with an empty
 *    frontier and a null checkpoint is the log's beginning; otherwise `checkpoint` is the signed checkpoint at `size`
 *    and `frontier` its frontier, from which the verifier resumes.
 * 2. For each position from `size` on, in order, `{"type":"entry", "position", "kind", "leaf", "record"}`: the record's
 *    stored JSON text and the leaf hash the log holds for it; or, for a record no longer stored, the same without
 *    `record` and with `"removed": true`. A decision whose filter fields, as its store keeps them for queries (PostgreSQL's
 *    `status` and `policy_id` columns), are not the record's own carries them as `"indexed": {"status", "policyId"}`,
 *    which fails verification (decision-agreement.ts). After the entry that completes a checkpoint, `{"type":"checkpoint",
 *    "checkpoint"}`. The export ends with the latest checkpoint.
 * 3. `{"type":"unlogged", "kind", "record"}` for each record the store holds that the log does not: a record put into
 *    the store around the log.
 */
import type { SignedCheckpoint } from "./checkpoint.js";
import type { IndexedFields } from "./decision-agreement.js";
import type { LogEntryKind } from "./entry.js";

export type ExportLine =
  | {
      readonly type: "start";
      readonly logId: string;
      readonly size: number;
      readonly frontier: readonly string[];
      readonly checkpoint: SignedCheckpoint | null;
    }
  | {
      readonly type: "entry";
      readonly position: number;
      readonly kind: LogEntryKind;
      readonly leaf: string;
      readonly record: string;
      /** Present only when the filter fields the store keeps beside the record are not the record's own. */
      readonly indexed?: IndexedFields;
    }
  | { readonly type: "entry"; readonly position: number; readonly kind: LogEntryKind; readonly leaf: string; readonly removed: true }
  | { readonly type: "checkpoint"; readonly checkpoint: SignedCheckpoint }
  | { readonly type: "unlogged"; readonly kind: LogEntryKind; readonly record: string };

/** A prune note's record (`kind` "prune"): the positions retention removed. */
export interface PruneNote {
  readonly positions: readonly number[];
  readonly reason: string;
}
