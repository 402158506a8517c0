/**
 * The log lines of the replay store's fingerprint set rebuild at start (runtime LmdbReplayStore `onRebuild`,
 * docs/replay.md "The fingerprint set"): how far it has got, at most every PROGRESS_EVERY_MS, and once done, its size
 * and time. The sidecar listens only once it is done (every replay check waits for it anyway).
 */
import type { RebuildProgress } from "@writ/runtime/lmdb";

const PROGRESS_EVERY_MS = 5_000;

export function rebuildLog(notice: (message: string) => void): (progress: RebuildProgress) => void {
  let lastAt = 0;
  return (progress) => {
    const seconds = (progress.elapsedMs / 1000).toFixed(1);
    if (progress.done) {
      const megabytes = (progress.bytes / 1_048_576).toFixed(0);
      notice(`replay fingerprint set rebuilt: ${progress.read} fingerprints in ${seconds} s, ${megabytes} MiB in memory`);
    } else if (progress.elapsedMs - lastAt >= PROGRESS_EVERY_MS) {
      lastAt = progress.elapsedMs;
      notice(`replay fingerprint set: ${progress.read} of ${progress.total} keys read (${seconds} s)`);
    }
  };
}
