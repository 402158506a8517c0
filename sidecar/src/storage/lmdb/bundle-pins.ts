/**
 * Bundle pins (runtime `BundlePins`) in the sidecar's LMDB environment: the `bundle-pins` database maps
 * `policyId@version` to the `bundle_hash` first served under it. A pin is written once, never replaced; `claim`
 * resolves once it is on disk (`LmdbDurability.durable`), so a version served before a crash keeps its bytes after it.
 * While the environment's writes are held (below the data dir's free-space reserve) a claim is refused: fail closed.
 */
import type { BundlePins } from "@writ/runtime";
import { LmdbDurability } from "@writ/runtime/lmdb";
import type { Database, RootDatabase } from "lmdb";

export const BUNDLE_PINS_DATABASE = "bundle-pins";

export class LmdbBundlePins implements BundlePins {
  readonly #root: RootDatabase;
  readonly #pins: Database<string, string>;
  readonly #durability: LmdbDurability;

  constructor(root: RootDatabase) {
    this.#root = root;
    this.#pins = root.openDB<string, string>(BUNDLE_PINS_DATABASE, { encoding: "string" });
    this.#durability = LmdbDurability.of(root);
  }

  async claim(policyId: string, version: string, bundleHash: string): Promise<string> {
    const key = `${policyId}@${version}`;
    this.#durability.admit();
    return this.#durability.durable(
      this.#root.transaction(() => {
        const pinned = this.#pins.get(key);
        if (pinned !== undefined) return pinned;
        this.#pins.putSync(key, bundleHash);
        return bundleHash;
      }),
    );
  }
}
