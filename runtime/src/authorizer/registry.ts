import { join } from "node:path";
import { BundleError } from "../errors.js";
import { loadBundle, type BundleTrust, type LoadedBundle } from "../bundle/load.js";

/** How long one load of a bundle may take before it is refused (`SERVICE_BUNDLE_LOAD_TIMEOUT_MS`). */
export const DEFAULT_BUNDLE_LOAD_TIMEOUT_MS = 10_000;

export interface RegistryOptions {
  /** The whole load (every read, hash, signature check and preparation) must finish within it; default 10,000. */
  readonly loadTimeoutMs?: number;
}

/**
 * The bundles a runtime serves, loaded on first use and kept. A version's bundle is immutable, so it is
 * read once; `reload` re-reads it from disk.
 * INVARIANT (a good bundle is never replaced by a bad one): a reload that fails any check (tampered,
 * unsigned when signatures are required, unknown key) leaves the loaded bundle in place and reports why.
 * INVARIANT (only a bundle that loaded is kept): a load that fails, times out or is abandoned at `close` is
 * forgotten, so the next request loads again and a bundle fixed on disk is served without a restart. Requests
 * for a version whose load is under way share that one load.
 */
export class PolicyRegistry {
  readonly #bundles = new Map<string, Promise<LoadedBundle>>();
  /** Loads under way, each with its bundle directory, aborted by `close`. */
  readonly #loads = new Map<AbortController, string>();
  readonly #timeoutMs: number;
  #closed = false;

  constructor(
    readonly root: string,
    readonly trust: BundleTrust = {},
    options: RegistryOptions = {},
  ) {
    const timeoutMs = options.loadTimeoutMs ?? DEFAULT_BUNDLE_LOAD_TIMEOUT_MS;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) throw new RangeError(`loadTimeoutMs must be a positive integer, not \`${String(timeoutMs)}\``);
    this.#timeoutMs = timeoutMs;
  }

  /** @throws BundleError (BUNDLE_NOT_FOUND when there is no such policy version) */
  get(policyId: string, version: string): Promise<LoadedBundle> {
    const key = `${policyId}@${version}`;
    const known = this.#bundles.get(key);
    if (known) return known;
    const loading = this.#load(policyId, version);
    this.#bundles.set(key, loading);
    loading.catch(() => {
      // Unless a reload has put a good bundle in its place meanwhile.
      if (this.#bundles.get(key) === loading) this.#bundles.delete(key);
    });
    return loading;
  }

  /** Re-reads a bundle; the new one replaces the old only when it passes every check. */
  async reload(policyId: string, version: string): Promise<{ readonly replaced: boolean; readonly error?: BundleError }> {
    try {
      const fresh = await this.#load(policyId, version);
      this.#bundles.set(`${policyId}@${version}`, Promise.resolve(fresh));
      return { replaced: true };
    } catch (e) {
      if (e instanceof BundleError) return { replaced: false, error: e };
      throw e;
    }
  }

  /**
   * Abandons the loads under way (their requests are refused at once instead of waiting for them) and refuses new
   * ones: shutdown never waits on a bundle read. The bundles already loaded stay readable through `get`.
   */
  close(): void {
    this.#closed = true;
    this.abandonLoads();
  }

  /**
   * Abandons the loads under way (their requests are refused at once), leaving the registry open: a server that starts
   * its graceful shutdown does not wait on a bundle read already stuck, while a request still arriving is served.
   */
  abandonLoads(): void {
    for (const [load, dir] of this.#loads) load.abort(new BundleError("BUNDLE_INVALID", "the service is shutting down: the bundle load under way was abandoned", dir));
  }

  /**
   * One load within the timeout. A read the system never completes (a hung disk, a network file system) cannot be
   * cancelled: the load stops at its next step and its result, should one come, is dropped; the caller is answered
   * when the timeout fires.
   */
  #load(policyId: string, version: string): Promise<LoadedBundle> {
    const dir = join(this.root, policyId, version);
    if (this.#closed) return Promise.reject(new BundleError("BUNDLE_INVALID", "the policy registry is closed", dir));
    const controller = new AbortController();
    this.#loads.set(controller, dir);
    const timer = setTimeout(() => controller.abort(new BundleError("BUNDLE_INVALID", `the bundle did not load within ${this.#timeoutMs} ms`, dir)), this.#timeoutMs);
    // A pending load alone does not keep the process alive.
    timer.unref();
    return new Promise<LoadedBundle>((resolve, reject) => {
      controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
      loadBundle(this.root, policyId, version, this.trust, { signal: controller.signal })
        .then(resolve, reject)
        .finally(() => {
          clearTimeout(timer);
          this.#loads.delete(controller);
        });
    });
  }
}
