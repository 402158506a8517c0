/**
 * Bundle pins (runtime `BundlePins`) in the fleet's database: one row per `policyId@version`, inserted once by
 * whichever sidecar serves it first, so every sidecar of the fleet serves the same bytes under one name.
 */
import { StoreUnavailableError, type BundlePins } from "@writ/runtime";
import type pg from "pg";
import { query } from "./connection/query.js";

/**
 * One statement: the row inserted, or the row already there. A row inserted by another sidecar after this statement's
 * snapshot is neither (ON CONFLICT waited for it, the SELECT cannot see it): the claim is asked again.
 */
const CLAIM = `WITH claimed AS (
  INSERT INTO writ_bundle_pins (policy_id, version, bundle_hash) VALUES ($1, $2, $3)
  ON CONFLICT (policy_id, version) DO NOTHING
  RETURNING bundle_hash
)
SELECT bundle_hash FROM claimed
UNION ALL
SELECT bundle_hash FROM writ_bundle_pins WHERE policy_id = $1 AND version = $2
LIMIT 1`;

const ATTEMPTS = 3;

export class PostgresBundlePins implements BundlePins {
  constructor(private readonly pool: pg.Pool) {}

  async claim(policyId: string, version: string, bundleHash: string): Promise<string> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const { rows } = await query<{ bundle_hash: string }>(this.pool, "pinning a bundle version", CLAIM, [policyId, version, bundleHash]);
      if (rows[0]) return rows[0].bundle_hash;
    }
    throw new StoreUnavailableError(`pinning \`${policyId}@${version}\` found no row after ${ATTEMPTS} attempts`);
  }
}
