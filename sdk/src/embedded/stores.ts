import type { ReplayStore } from "@writ/runtime";

/**
 * A durable replay store for an embedded authorizer: an LMDB environment in `directory` (created when missing),
 * which refuses a replayed executionId across restarts and across processes on one host. Every acknowledged write is
 * on disk (docs/replay.md).
 *
 * A function rather than the class, and asynchronous: lmdb is a native module that only persistent stores need, and
 * this is the one place the SDK reaches for it. Today `@writ/runtime` loads lmdb with its main entry anyway; once it
 * serves the LMDB store from an entry of its own (docs/sdk.md, "Install footprint"), only this import changes, and
 * applications that do not persist neither install nor load lmdb.
 */
export async function openLmdbReplayStore(directory: string): Promise<ReplayStore> {
  const { LmdbReplayStore } = await import("@writ/runtime");
  return new LmdbReplayStore(directory);
}
