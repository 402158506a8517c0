import type { ReplayStore } from "@writ/runtime";

/**
 * A durable replay store for an embedded authorizer: an LMDB environment in `directory` (created when missing),
 * which refuses a replayed executionId across restarts and across processes on one host. Every acknowledged write is
 * on disk (docs/replay.md).
 *
 * A function rather than the class, and asynchronous: lmdb is a native module (an optional peer dependency) that
 * only persistent stores need, and this is the one place the SDK reaches for it, through `@writ/runtime/lmdb`:
 * applications that do not persist neither install nor load it (docs/sdk.md, "Install footprint").
 */
export async function openLmdbReplayStore(directory: string): Promise<ReplayStore> {
  const { LmdbReplayStore } = await import("@writ/runtime/lmdb");
  return new LmdbReplayStore(directory);
}
