/**
 * Signed checkpoints of an audit log (docs/audit.md, "Checkpoints" and "The checkpoint chain"): the log's size, Merkle
 * root, time, frontier (so a verifier resumes from it) and the previous checkpoint's hash, signed like every writ
 * object (Ed25519 over PAE(PAYLOAD_TYPES.auditCheckpoint, JCS(the checkpoint without `signature`)), `keyId` covered).
 * `checkpointHash` (SHA-256 of the JCS of all of it, signature included) is the next one's `previous`: a hash chain.
 *
 * INVARIANT (a checkpoint is trusted only whole): `verifyCheckpoint` answers `valid` only when the shape is exact,
 * the signature verifies against the pinned key its `keyId` names, and the frontier hashes to `rootHash` at `size`.
 */
import { canonicalJson } from "../canonical/jcs.js";
import { sha256Hex } from "../canonical/digest.js";
import { isJsonObject } from "../bundle/json-object.js";
import type { TrustRoot } from "../attest/trust-root.js";
import { SignatureFormatError } from "../errors.js";
import type { PublicKey, SigningKey } from "../signing/keys.js";
import { PAYLOAD_TYPES } from "../signing/payload-types.js";
import type { Ed25519Engine } from "../signing/engine.js";
import { decodeSignature, signObject, signObjectVerified, verifyObject } from "../signing/sign.js";
import { MerkleFrontier, popcount } from "./frontier.js";
import { hashFromHex, isHashHex, toHex } from "./hex.js";
import { hashEquals } from "./merkle.js";
import { show } from "./show.js";
import type { SignedCheckpoint } from "@writ/wire/types";

/** A log's id: the sidecar instance id. */
export const LOG_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** RFC 3339 in UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
export const CHECKPOINT_TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const KEY_ID_PATTERN = /^[0-9a-f]{32}$/;

/** A checkpoint (docs/audit.md) as the wire carries it, and its body: what its signature covers, but for `keyId`. */
export type { SignedCheckpoint };
export type CheckpointBody = Omit<SignedCheckpoint, "keyId" | "signature">;

/** What `createCheckpoint` makes a checkpoint of. */
export interface CheckpointFields {
  readonly logId: string;
  /** The log's frontier at the size the checkpoint covers: it gives `size`, `rootHash` and `frontier`. */
  readonly frontier: MerkleFrontier;
  readonly timestamp: Date;
  /** The log's checkpoint before this one, or null for its first. */
  readonly previous: SignedCheckpoint | null;
}

export interface CheckpointVerification {
  readonly valid: boolean;
  /** What failed, lowercase; empty when valid. */
  readonly errors: string[];
  /** The checkpoint, rebuilt from its known members: only when valid. */
  readonly checkpoint?: SignedCheckpoint;
}

const MEMBERS = ["logId", "size", "rootHash", "timestamp", "previous", "frontier", "keyId", "signature"] as const;

/** Whether `value` is a checkpoint timestamp: the pattern, and a real instant written as toISOString writes it. */
export function isCheckpointTimestamp(value: unknown): value is string {
  if (typeof value !== "string" || !CHECKPOINT_TIMESTAMP_PATTERN.test(value)) return false;
  const ms = Date.parse(value);
  return !Number.isNaN(ms) && new Date(ms).toISOString() === value;
}

/**
 * The checkpoint of `fields.frontier` signed with `key`: `size`, `rootHash` and `frontier` come from the frontier, so
 * they always agree; `previous` is `checkpointHash(fields.previous)`, or null for the log's first checkpoint.
 * @throws RangeError when `logId` is not a log id, `timestamp` is not a valid date between years 0 and 9999, or
 *   `previous` is of another log, of a larger size, or of the same size with another root
 * @throws KeyError when the key is unusable
 */
export function createCheckpoint(fields: CheckpointFields, key: SigningKey): SignedCheckpoint {
  const unsigned = checkpointBody(fields, key.keyId);
  return { ...unsigned, signature: signObject(PAYLOAD_TYPES.auditCheckpoint, unsigned, key) };
}

/**
 * {@link createCheckpoint} through an Ed25519Engine (the sidecar's signing threads): the checkpoint once its signature
 * self-verified. Throws as createCheckpoint does, and KeyError when self-verification failed.
 */
export async function signCheckpoint(fields: CheckpointFields, key: SigningKey, engine: Ed25519Engine): Promise<SignedCheckpoint> {
  const unsigned = checkpointBody(fields, key.keyId);
  return { ...unsigned, signature: await signObjectVerified(PAYLOAD_TYPES.auditCheckpoint, unsigned, key, engine) };
}

function checkpointBody(fields: CheckpointFields, keyId: string): Omit<SignedCheckpoint, "signature"> {
  const { logId, frontier, timestamp, previous } = fields;
  if (typeof logId !== "string" || !LOG_ID_PATTERN.test(logId)) {
    throw new RangeError(`log id \`${show(logId)}\` is not 1-128 letters, digits, \`.\`, \`_\`, \`:\` or \`-\``);
  }
  const time = timestamp instanceof Date && !Number.isNaN(timestamp.getTime()) ? timestamp.toISOString() : "";
  if (!isCheckpointTimestamp(time)) throw new RangeError("checkpoint timestamp is not a valid date between years 0 and 9999");
  const rootHash = toHex(frontier.root());
  if (previous !== null) {
    if (previous.logId !== logId) throw new RangeError(`previous checkpoint is of log \`${previous.logId}\`, not \`${logId}\``);
    if (previous.size > frontier.size)
      throw new RangeError(`previous checkpoint covers ${previous.size} entries, more than this one's ${frontier.size}`);
    if (previous.size === frontier.size && previous.rootHash !== rootHash) {
      throw new RangeError(`previous checkpoint has another root at the same size ${frontier.size}: the log forked`);
    }
  }
  return {
    logId,
    size: frontier.size,
    rootHash,
    timestamp: time,
    previous: previous === null ? null : checkpointHash(previous),
    frontier: frontier.hashes().map(toHex),
    keyId,
  };
}

/** SHA-256 of the JCS of the whole signed checkpoint (signature included), lowercase hex: the next one's `previous`. */
export function checkpointHash(checkpoint: SignedCheckpoint): string {
  return sha256Hex(canonicalJson(checkpoint));
}

/** The pinned keys of `keys`: a list of public keys, or a trust root's. */
function pinnedKeys(keys: readonly PublicKey[] | TrustRoot): readonly PublicKey[] {
  return Array.isArray(keys) ? (keys as readonly PublicKey[]) : (keys as TrustRoot).keys;
}

/**
 * Verifies a checkpoint as received (strictly parsed JSON): exactly the members of {@link SignedCheckpoint}, each of
 * its form; the signature against the pinned key its `keyId` names (a key arriving with the checkpoint is never
 * trusted); the frontier has one hash per bit set in `size` and hashes to `rootHash`. It does not check `previous`
 * (see chain.ts).
 * @throws KeyError when a pinned key is unusable (a configuration error)
 */
export function verifyCheckpoint(value: unknown, keys: readonly PublicKey[] | TrustRoot): CheckpointVerification {
  const errors = memberErrors(value, MEMBERS);
  if (errors.length === 0)
    errors.push(...bodyErrors(value as Record<string, unknown>), ...signatureFormErrors(value as Record<string, unknown>));
  if (errors.length > 0) return { valid: false, errors };
  const c = value as unknown as SignedCheckpoint;
  const key = pinnedKeys(keys).find((k) => k.keyId === c.keyId);
  if (key === undefined) {
    errors.push(`checkpoint key \`${c.keyId}\` is not pinned`);
  } else {
    try {
      decodeSignature(c.signature);
      if (verifyObject(PAYLOAD_TYPES.auditCheckpoint, c, c.signature, [key]) === null) {
        errors.push(`checkpoint signature does not verify against pinned key \`${key.keyId}\``);
      }
    } catch (error) {
      if (!(error instanceof SignatureFormatError)) throw error;
      errors.push(`checkpoint signature is malformed: ${error.message}`);
    }
  }
  errors.push(...frontierErrors(c));
  if (errors.length > 0) return { valid: false, errors };
  const checkpoint: SignedCheckpoint = {
    logId: c.logId,
    size: c.size,
    rootHash: c.rootHash,
    timestamp: c.timestamp,
    previous: c.previous,
    frontier: [...c.frontier],
    keyId: c.keyId,
    signature: c.signature,
  };
  return { valid: true, errors: [], checkpoint };
}

/** `value` must be an object with exactly the members `members`. */
function memberErrors(value: unknown, members: readonly string[]): string[] {
  if (!isJsonObject(value)) return ["checkpoint is not a JSON object"];
  const errors: string[] = [];
  for (const name of Object.keys(value)) if (!members.includes(name)) errors.push(`checkpoint has unknown member \`${show(name)}\``);
  for (const name of members) if (!Object.hasOwn(value, name)) errors.push(`checkpoint lacks \`${name}\``);
  return errors;
}

/** What is wrong with the form of the body members, in member order. */
function bodyErrors(value: Record<string, unknown>): string[] {
  const errors: string[] = [];
  const { logId, size, rootHash, timestamp, previous, frontier } = value;
  if (typeof logId !== "string" || !LOG_ID_PATTERN.test(logId)) {
    errors.push(`checkpoint logId \`${show(logId)}\` is not 1-128 letters, digits, \`.\`, \`_\`, \`:\` or \`-\``);
  }
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0)
    errors.push(`checkpoint size \`${show(size)}\` is not a non-negative safe integer`);
  if (!isHashHex(rootHash)) errors.push(`checkpoint rootHash \`${show(rootHash)}\` is not 64 lowercase hex digits`);
  if (!isCheckpointTimestamp(timestamp)) {
    errors.push(
      `checkpoint timestamp \`${show(timestamp)}\` is not an RFC 3339 UTC time with milliseconds (like 2026-01-15T09:00:00.000Z)`,
    );
  }
  if (previous !== null && !isHashHex(previous))
    errors.push(`checkpoint previous \`${show(previous)}\` is neither null nor 64 lowercase hex digits`);
  if (!Array.isArray(frontier) || !frontier.every(isHashHex))
    errors.push("checkpoint frontier is not a list of hashes (64 lowercase hex digits)");
  return errors;
}

function signatureFormErrors(value: Record<string, unknown>): string[] {
  const { keyId, signature } = value;
  const errors: string[] = [];
  if (typeof keyId !== "string" || !KEY_ID_PATTERN.test(keyId))
    errors.push(`checkpoint keyId \`${show(keyId)}\` is not 32 lowercase hex digits`);
  if (typeof signature !== "string") errors.push("checkpoint signature is not a string");
  return errors;
}

/** The frontier of a well-formed body must have one hash per bit set in `size` and hash to `rootHash`. */
function frontierErrors(body: CheckpointBody): string[] {
  const bits = popcount(body.size);
  if (body.frontier.length !== bits) {
    return [
      `checkpoint frontier has ${body.frontier.length} hashes; a tree of size ${body.size} has ${bits} (one per bit set in the size)`,
    ];
  }
  const root = MerkleFrontier.from(body.size, body.frontier.map(hashFromHex)).root();
  return hashEquals(root, hashFromHex(body.rootHash)) ? [] : [`checkpoint frontier does not hash to its rootHash \`${body.rootHash}\``];
}
