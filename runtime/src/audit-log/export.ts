/**
 * The export of an audit log: NDJSON, one JSON object per line, in the order of docs/audit.md, "Export": a `start`
 * line (the checkpoint and frontier a verifier resumes from), then for each position an `entry` line (the stored
 * record text and the leaf the log holds, or `"removed": true`; `indexed` when the store's filter fields are not the
 * record's own, which fails verification: decision-agreement.ts), a `checkpoint` line after each entry that completes
 * one, ending with the latest; then an `unlogged` line for each record the store holds that the log does not.
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
