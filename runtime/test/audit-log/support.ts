import { MerkleFrontier, createCheckpoint, entryLeafHash, type LogEntry, type SignedCheckpoint, type SigningKey } from "../../src/index.js";
import { keyFromSeed, TEST_SEED_1, TEST_SEED_2 } from "../support/signer.js";

export const signer: SigningKey = keyFromSeed(TEST_SEED_1);
export const stranger: SigningKey = keyFromSeed(TEST_SEED_2);
export const LOG_ID = "sidecar-test:1";
export const T0 = Date.parse("2026-01-15T09:00:00.000Z");

const KINDS = ["decision", "override", "confirmation", "verification", "security", "prune"] as const;

/** A log of `count` entries: the entries, their leaf hashes, and checkpoints at any size. */
export function testLog(count: number, logId = LOG_ID) {
  const entries: LogEntry[] = Array.from({ length: count }, (_, position) => ({
    position,
    kind: KINDS[position % KINDS.length]!,
    record: JSON.stringify({ id: `record-${position}`, n: position }),
  }));
  const leaves = entries.map(entryLeafHash);
  const checkpoint = (size: number, previous: SignedCheckpoint | null = null, key: SigningKey = signer): SignedCheckpoint => {
    const frontier = MerkleFrontier.empty();
    for (const h of leaves.slice(0, size)) frontier.append(h);
    return createCheckpoint({ logId, frontier, timestamp: new Date(T0 + size * 1000), previous }, key);
  };
  return { entries, leaves, checkpoint };
}
