/**
 * Where the `bundle_hash` of each `policyId@version` is pinned (docs/bundles.md, "Immutable at run time"):
 * the registry's INVARIANT (a version is immutable) holds as far as its pins reach. In memory they last the process;
 * the sidecar keeps them in its store (the data dir, or the fleet's database), so they last across restarts and, on
 * PostgreSQL, hold for every sidecar of the fleet: no two hosts serve two bundles under one name.
 */
export interface BundlePins {
  /**
   * Pins `bundleHash` to `policyId@version` unless a hash is pinned to it already; resolves to the hash pinned (the
   * first one claimed, which may be another). Resolves only once the pin is durable.
   * @throws StoreUnavailableError when the store cannot be read or written (the bundle is then not served)
   */
  claim(policyId: string, version: string, bundleHash: string): Promise<string>;
}

/** Pins for the life of the process (tests, development, and a sidecar without a durable store). */
export class MemoryBundlePins implements BundlePins {
  readonly #pins = new Map<string, string>();

  async claim(policyId: string, version: string, bundleHash: string): Promise<string> {
    const key = `${policyId}@${version}`;
    const pinned = this.#pins.get(key);
    if (pinned !== undefined) return pinned;
    this.#pins.set(key, bundleHash);
    return bundleHash;
  }
}
