import { BundleError } from "../errors.js";
import { loadBundle, type BundleTrust, type LoadedBundle } from "../bundle/load.js";

/**
 * The bundles a runtime serves, loaded on first use and kept. A version's bundle is immutable, so it is
 * read once; `reload` re-reads it from disk.
 * INVARIANT (a good bundle is never replaced by a bad one): a reload that fails any check (tampered,
 * unsigned when signatures are required, unknown key) leaves the loaded bundle in place and reports why.
 */
export class PolicyRegistry {
  readonly #bundles = new Map<string, Promise<LoadedBundle>>();

  constructor(
    readonly root: string,
    readonly trust: BundleTrust = {},
  ) {}

  /** @throws BundleError (BUNDLE_NOT_FOUND when there is no such policy version) */
  get(policyId: string, version: string): Promise<LoadedBundle> {
    const key = `${policyId}@${version}`;
    let loading = this.#bundles.get(key);
    if (!loading) {
      loading = loadBundle(this.root, policyId, version, this.trust);
      this.#bundles.set(key, loading);
      // A failed load is not cached: the bundle may be deployed a moment later.
      loading.catch(() => this.#bundles.delete(key));
    }
    return loading;
  }

  /** Re-reads a bundle; the new one replaces the old only when it passes every check. */
  async reload(policyId: string, version: string): Promise<{ readonly replaced: boolean; readonly error?: BundleError }> {
    try {
      const fresh = await loadBundle(this.root, policyId, version, this.trust);
      this.#bundles.set(`${policyId}@${version}`, Promise.resolve(fresh));
      return { replaced: true };
    } catch (e) {
      if (e instanceof BundleError) return { replaced: false, error: e };
      throw e;
    }
  }
}
