/**
 * The background checkpointer (record-log/checkpointer.ts) under records that keep arriving: a scheduled round appends
 * at most ROUND_BATCHES batches, then signs its checkpoint, and a forced round (an export's) ends once what was pending
 * when it began is in the log, however fast more comes.
 */
import type { SignedCheckpoint } from "@writ/runtime";
import { describe, expect, it } from "vitest";
import { Checkpointer, ROUND_BATCHES, SEQUENCE_BATCH } from "../../src/audit/record-log/checkpointer.js";
import type { LogCounts, RecordLogStorage } from "../../src/audit/record-log/log-storage.js";
import { LOG_SIGNER } from "./record-log-contract.js";

/** A log whose pending set never empties: each batch appended, another batch and more has arrived. */
function flooded(): { storage: RecordLogStorage; sequenced: () => number; checkpoints: number[] } {
  let size = 0;
  let latest: SignedCheckpoint | null = null;
  const checkpoints: number[] = [];
  const storage = {
    logId: "flooded",
    sequence: async () => {
      size += SEQUENCE_BATCH;
      return SEQUENCE_BATCH;
    },
    checkpoint: async () => {
      checkpoints.push(size);
      latest = { logId: "flooded", size, timestamp: new Date().toISOString() } as SignedCheckpoint;
      return latest;
    },
    stale: async () => [],
    counts: async (): Promise<LogCounts> => ({ size, pending: 5 * SEQUENCE_BATCH, latest }),
  } as unknown as RecordLogStorage;
  return { storage, sequenced: () => size, checkpoints };
}

describe("the checkpointer under records that keep arriving", () => {
  it("a scheduled round appends at most ROUND_BATCHES batches, then signs its checkpoint", async () => {
    const log = flooded();
    const checkpointer = new Checkpointer(
      log.storage,
      { signer: LOG_SIGNER, intervalMs: 3_600_000, everyRecords: 1_000 },
      { onError: () => undefined },
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(log.checkpoints.length).toBeGreaterThan(0);
      expect(log.checkpoints[0]).toBe(ROUND_BATCHES * SEQUENCE_BATCH);
    } finally {
      await checkpointer.stop();
    }
  });

  it("a forced round appends what was pending when it began, then checkpoints", async () => {
    const log = flooded();
    const checkpointer = new Checkpointer(
      log.storage,
      { signer: LOG_SIGNER, intervalMs: 3_600_000, everyRecords: 1_000_000_000 },
      { onError: () => undefined },
    );
    try {
      // Before the first scheduled round (200 ms): 5 batches were pending when it began.
      const checkpoint = await checkpointer.now();
      expect(checkpoint?.size).toBe(5 * SEQUENCE_BATCH);
    } finally {
      await checkpointer.stop();
    }
  });
});
