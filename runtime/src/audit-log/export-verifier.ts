/**
 * Verifies an audit log export (export.ts) line by line, with O(log n) memory for the tree: what `writ audit verify`
 * runs. The checks of the start, of each entry (position, leaf, record bytes, attestation signature, `indexed` filter
 * fields), of each checkpoint, of removed records against the prune notes, and of the final checkpoint are listed in
 * docs/audit.md, "Verifying an export".
 *
 * INVARIANT (nothing unverified passes): `finish` answers `valid` only when every line passed every check; otherwise
 * the failures name their line, and the position of the record or the size of the checkpoint, first by line.
 */
import type { TrustRoot } from "../attest/trust-root.js";
import { verifyAttestation } from "../attest/verify.js";
import type { PublicKey } from "../signing/keys.js";
import { checkpointHash, verifyCheckpoint, type SignedCheckpoint } from "./checkpoint.js";
import { decisionDisagreement, indexedDisagreement, type DecisionFields } from "./decision-agreement.js";
import { entryLeafHash, isLogEntryKind, type LogEntryKind } from "./entry.js";
import type { PruneNote } from "./export.js";
import { MerkleFrontier } from "./frontier.js";
import { hashFromHex, isHashHex, toHex } from "./hex.js";

export interface ExportFailure {
  /** 1-based line of the export. */
  readonly line: number;
  /** The record's position, for an entry. */
  readonly position?: number;
  /** The checkpoint's size, for a checkpoint. */
  readonly checkpoint?: number;
  readonly reason: string;
}

export interface ExportReport {
  readonly valid: boolean;
  readonly logId: string | null;
  readonly entries: number;
  readonly removed: number;
  readonly checkpoints: number;
  /** Decisions whose attestation signature was checked. */
  readonly attestations: number;
  /** The last checkpoint verified. */
  readonly latest: SignedCheckpoint | null;
  /** Every failure, in line order (the first is the one to report). */
  readonly failures: readonly ExportFailure[];
}

/**
 * Checks one record's content beyond its hash; answers why it fails, or null. The CLI checks a decision's embedded
 * attestation signature against the pinned keys here.
 */
export type RecordCheck = (kind: LogEntryKind, record: unknown) => string | null;

/**
 * The check `writ audit verify` and the SDK run on each record: a decision's attestation carries a signature of a pinned
 * key, and the record states what its attestation signs: the executionId, and the status of its verdict. A record
 * forged into a trail before the log took it in (its leaf then hashes the forged body) is caught here, not by the log.
 */
export function decisionAttestationSigned(trustRoot: TrustRoot): RecordCheck {
  return (kind, record) => {
    if (kind !== "decision") return null;
    const attestation = (record as { attestation?: unknown } | null)?.attestation;
    if (!verifyAttestation(attestation, { trustRoot }).checks.signature_verified)
      return "its attestation's signature does not verify against the pinned keys";
    return decisionDisagreement(record as DecisionFields);
  };
}

export class ExportVerifier {
  readonly #keys: readonly PublicKey[] | TrustRoot;
  readonly #checkRecord: RecordCheck;
  #line = 0;
  #logId: string | null = null;
  #frontier: MerkleFrontier | null = null;
  #previous: string | null = null;
  #latest: SignedCheckpoint | null = null;
  #entries = 0;
  #checkpoints = 0;
  #attestations = 0;
  /** Removed positions, by the line that showed them, until a prune note lists them. */
  readonly #removed = new Map<number, number>();
  readonly #pruned = new Set<number>();
  #removedTotal = 0;
  readonly #failures: ExportFailure[] = [];

  constructor(keys: readonly PublicKey[] | TrustRoot, checkRecord: RecordCheck = () => null) {
    this.#keys = keys;
    this.#checkRecord = checkRecord;
  }

  /** One line of the export, parsed (a line that is not JSON is reported by the caller with `fail`). */
  add(value: unknown): void {
    this.#line += 1;
    const line = value as Record<string, unknown> | null;
    if (typeof line !== "object" || line === null) return this.fail("not a JSON object");
    if (this.#frontier === null && line["type"] !== "start") return this.fail("the export does not begin with its `start` line");
    switch (line["type"]) {
      case "start":
        return this.#start(line);
      case "entry":
        return this.#entry(line);
      case "checkpoint":
        return this.#checkpoint(line["checkpoint"]);
      case "unlogged":
        return this.fail(`a ${String(line["kind"])} record is stored but not in the log: put there around it`);
      default:
        return this.fail(`unknown line type \`${String(line["type"])}\``);
    }
  }

  /** Records a failure of the current line (a caller's parse error, say). */
  fail(reason: string, where: { position?: number; checkpoint?: number } = {}): void {
    this.#failures.push({ line: this.#line, ...where, reason });
  }

  finish(): ExportReport {
    for (const [position, line] of this.#removed) {
      if (!this.#pruned.has(position))
        this.#failures.push({ line, position, reason: "the record was removed, and no prune note of the log lists it" });
    }
    if (this.#frontier !== null && this.#latest !== null && this.#frontier.size > this.#latest.size) {
      this.#failures.push({
        line: this.#line,
        position: this.#latest.size,
        reason: `${this.#frontier.size - this.#latest.size} entries after the last checkpoint are covered by none`,
      });
    }
    if (this.#frontier !== null && this.#latest === null && this.#frontier.size > 0) {
      this.#failures.push({ line: this.#line, reason: "no checkpoint covers the entries" });
    }
    this.#failures.sort((a, b) => a.line - b.line);
    return {
      valid: this.#frontier !== null && this.#failures.length === 0,
      logId: this.#logId,
      entries: this.#entries,
      removed: this.#removedTotal,
      checkpoints: this.#checkpoints,
      attestations: this.#attestations,
      latest: this.#latest,
      failures: [...this.#failures],
    };
  }

  #start(line: Record<string, unknown>): void {
    if (this.#frontier !== null) return this.fail("a second `start` line");
    const { logId, size, frontier, checkpoint } = line;
    if (
      typeof logId !== "string" ||
      typeof size !== "number" ||
      !Number.isSafeInteger(size) ||
      size < 0 ||
      !Array.isArray(frontier) ||
      !frontier.every(isHashHex)
    ) {
      this.#frontier = MerkleFrontier.empty();
      return this.fail("the `start` line is malformed");
    }
    this.#logId = logId;
    if (size === 0) {
      this.#frontier = MerkleFrontier.empty();
      if (checkpoint !== null || frontier.length > 0) this.fail("an export from the beginning has no checkpoint and an empty frontier");
      return;
    }
    const verified = verifyCheckpoint(checkpoint, this.#keys);
    if (!verified.valid || verified.checkpoint === undefined) {
      this.#frontier = MerkleFrontier.empty();
      return this.fail(`the starting checkpoint does not verify: ${verified.errors.join("; ")}`, { checkpoint: size });
    }
    const start = verified.checkpoint;
    if (start.logId !== logId || start.size !== size || start.frontier.join() !== frontier.join()) {
      this.#frontier = MerkleFrontier.empty();
      return this.fail("the `start` line does not match its checkpoint", { checkpoint: size });
    }
    this.#frontier = MerkleFrontier.from(size, frontier.map(hashFromHex));
    this.#previous = checkpointHash(start);
    this.#latest = start;
  }

  #entry(line: Record<string, unknown>): void {
    const frontier = this.#frontier!;
    const { position, kind, leaf, record, removed, indexed } = line;
    if (position !== frontier.size)
      return this.fail(`entry at position ${String(position)} where ${frontier.size} was due: an entry is missing or out of order`, {
        position: frontier.size,
      });
    if (!isLogEntryKind(kind) || !isHashHex(leaf)) return this.fail("the entry is malformed", { position });
    frontier.append(hashFromHex(leaf));
    this.#entries += 1;
    if (removed === true && record === undefined) {
      this.#removed.set(position, this.#line);
      this.#removedTotal += 1;
      return;
    }
    if (typeof record !== "string") return this.fail("the entry has neither a record nor `removed`", { position });
    if (toHex(entryLeafHash({ kind, record })) !== leaf) {
      return this.fail(`the ${kind} record at position ${position} is not the one logged there: it was changed, moved or replaced`, {
        position,
      });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(record);
    } catch {
      return this.fail(`the ${kind} record at position ${position} is not JSON`, { position });
    }
    if (kind === "prune") for (const p of (parsed as Partial<PruneNote>).positions ?? []) this.#pruned.add(p);
    if (kind === "decision") this.#attestations += 1;
    const why = (indexed === undefined ? null : indexedDisagreement(indexed, parsed as DecisionFields)) ?? this.#checkRecord(kind, parsed);
    if (why !== null) this.fail(`the ${kind} record at position ${position}: ${why}`, { position });
  }

  #checkpoint(value: unknown): void {
    const frontier = this.#frontier!;
    const verified = verifyCheckpoint(value, this.#keys);
    const size = typeof (value as { size?: unknown })?.size === "number" ? (value as { size: number }).size : undefined;
    if (!verified.valid || verified.checkpoint === undefined)
      return this.fail(`checkpoint does not verify: ${verified.errors.join("; ")}`, {
        ...(size === undefined ? {} : { checkpoint: size }),
      });
    const checkpoint = verified.checkpoint;
    const where = { checkpoint: checkpoint.size };
    this.#checkpoints += 1;
    if (this.#logId !== null && checkpoint.logId !== this.#logId)
      return this.fail(`checkpoint of log \`${checkpoint.logId}\`, not \`${this.#logId}\``, where);
    if (checkpoint.size !== frontier.size) return this.fail(`checkpoint of size ${checkpoint.size} after ${frontier.size} entries`, where);
    if (toHex(frontier.root()) !== checkpoint.rootHash)
      return this.fail(`the entries up to ${checkpoint.size} do not hash to the checkpoint's root: a logged leaf was changed`, where);
    if (checkpoint.previous !== this.#previous)
      return this.fail("the checkpoint does not name the previous checkpoint: the chain is broken", where);
    this.#previous = checkpointHash(checkpoint);
    this.#latest = checkpoint;
  }
}
