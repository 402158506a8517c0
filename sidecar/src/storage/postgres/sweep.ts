/**
 * Sweeping expired reservations and failed replay entries on a fleet's database: one sidecar at a time. Each round,
 * every sidecar tries the session advisory lock SWEEP_LOCK; the one that gets it sweeps, the others skip the round
 * (they would only contend for the same rows). Sweeping is conditional DELETEs of a few hundred expired rows each, each
 * its own statement, found through the expiry index (PostgresReplayStore `sweep`): harmless if it ever overlapped, and
 * the lock, a session lock held on a client of its own, holds no row and blocks no transition meanwhile.
 */
import type { PostgresReplayStore } from "./replay-store.js";
import type pg from "pg";
import { checkOut, query } from "./query.js";

/** Held by the sidecar sweeping this round; the key is the same in every sidecar of a fleet. */
export const SWEEP_LOCK = "writ.replay.sweep";

/**
 * Sweeps when no other sidecar of the fleet is sweeping: the number of entries removed, or null when another held the
 * lock. The lock is held on one client meanwhile; a client that may still hold it (its unlock failed) is destroyed,
 * not returned to the pool, so its session (and the lock) ends.
 */
export async function sweepOnce(pool: pg.Pool, replay: PostgresReplayStore): Promise<number | null> {
  const { client, release } = await checkOut(pool, "taking the sweep lock");
  let clean = false;
  try {
    const { rows } = await query<{ locked: boolean }>(
      client,
      "taking the sweep lock",
      "SELECT pg_try_advisory_lock(hashtext($1)) AS locked",
      [SWEEP_LOCK],
    );
    if (rows[0]?.locked !== true) {
      clean = true;
      return null;
    }
    try {
      return await replay.sweep();
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtext($1))", [SWEEP_LOCK]).then(
        () => (clean = true),
        () => undefined,
      );
    }
  } finally {
    release(!clean);
  }
}
