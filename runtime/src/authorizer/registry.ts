import { join } from "node:path";
import { BundleError } from "../errors.js";
import { StoreUnavailableError } from "../replay/errors.js";
import { loadBundle, type BundleTrust, type LoadedBundle } from "../bundle/load.js";
import { loadBundleArchive, archiveFileName } from "../bundle/archive.js";
import { readBundleFile } from "../bundle/read-file.js";
import { listBundleVersions, type BundleLocation } from "./bundle-listing.js";
import { BundleLoadTally, type BundleLoadOutcome } from "./load-tally.js";
import { MemoryBundlePins, type BundlePins } from "./pins.js";

/** How long one load of a bundle may take before it is refused (`SERVICE_BUNDLE_LOAD_TIMEOUT_MS`). */
export const DEFAULT_BUNDLE_LOAD_TIMEOUT_MS = 10_000;

/** How many refused version conflicts the registry remembers for health and logs (the oldest are dropped). */
const CONFLICTS_KEPT = 32;

export interface RegistryOptions {
  /** The whole load (every read, hash, signature check and preparation) must finish within it; default 10,000. */
  readonly loadTimeoutMs?: number;
  /** Where each version's `bundle_hash` is pinned; default: in memory, for the life of the registry. */
  readonly pins?: BundlePins;
}

/** `policyId@alias` names `version`; the alias is never a version itself. */
export interface BundleAlias {
  readonly policyId: string;
  readonly alias: string;
  readonly version: string;
}

/** A complete set of bundles to serve, installed at once (a remote source's verified index: `install`). */
export interface BundleSet {
  readonly bundles: readonly LoadedBundle[];
  readonly aliases: readonly BundleAlias[];
}

/** A bundle refused because its version was already served with other bytes (INVARIANT (a version is immutable)). */
export interface VersionConflict {
  readonly policyId: string;
  readonly version: string;
  /** The `bundle_hash` served, and still served. */
  readonly servedHash: string;
  /** The `bundle_hash` refused. */
  readonly refusedHash: string;
  /** Where the refused bundle came from: a directory, an archive or a URL. */
  readonly origin: string;
  /** ISO 8601. */
  readonly at: string;
}

/** A bundle as health reports it. */
export interface ServedBundle {
  readonly policyId: string;
  readonly version: string;
  readonly bundleHash: string;
  readonly signedBy: string | null;
}

/** A bundle not served, and why: a BundleError's code, or STORE_UNAVAILABLE when its version could not be pinned. */
export interface RefusedBundle {
  readonly policyId: string;
  readonly version: string;
  readonly code: string;
  readonly message: string;
}

/** What a whole load of the policies root found: `preload` serves what loaded, `reloadAll` only all or nothing. */
export interface LoadReport {
  readonly loaded: readonly ServedBundle[];
  readonly refused: readonly RefusedBundle[];
}

const keyOf = (policyId: string, version: string): string => `${policyId}@${version}`;

function served(bundle: LoadedBundle): ServedBundle {
  const { policyId, version, bundle_hash: bundleHash } = bundle.manifest;
  return { policyId, version, bundleHash, signedBy: bundle.signedBy };
}

/**
 * The bundles a runtime serves. Two modes:
 * - the policies root (the default): bundle directories `root/{policyId}/{version}/` and archives
 *   `root/{policyId}@{version}.bundle.json`, loaded on first use and kept (`preload` loads them all at once;
 *   `reloadAll` re-reads them all);
 * - an installed set (`install`, a remote source's verified index): once one is installed, only its bundles and
 *   aliases are served, and each later `install` replaces it whole.
 *
 * INVARIANT (a version is immutable): a bundle is served only once its `bundle_hash` is pinned to its
 * `policyId@version` in `pins` (the first hash claimed wins); a load, reload or installed set that brings other bytes
 * is refused (BUNDLE_VERSION_CONFLICT), the bundle served stays, and the conflict is kept for health (`conflicts`).
 * INVARIANT (a good bundle is never replaced by a bad one): a reload that fails any check (tampered,
 * unsigned when signatures are required, unknown key, a conflict) leaves the loaded bundle in place and reports why;
 * `reloadAll` and `install` change nothing unless every bundle passes.
 * INVARIANT (only a bundle that loaded is kept): a load that fails, times out or is abandoned at `close` is
 * forgotten, so the next request loads again and a bundle fixed on disk is served without a restart. Requests
 * for a version whose load is under way share that one load.
 * A request holds the bundle it was given: a reload or install that replaces it does not change a decision under way.
 */
export class PolicyRegistry {
  /** Every load of a bundle from the policies root, by how it ended (a metric's data). */
  readonly loads = new BundleLoadTally();
  #bundles = new Map<string, Promise<LoadedBundle>>();
  /** The bundles that loaded and were admitted, by `policyId@version`. */
  #admitted = new Map<string, LoadedBundle>();
  /** The installed set's aliases (`policyId@alias` to version); null in the policies-root mode. */
  #aliases: Map<string, string> | null = null;
  readonly #pinStore: BundlePins;
  /** The hashes pinned that this registry has seen, by `policyId@version`: pins never change, so they are kept. */
  readonly #pins = new Map<string, string>();
  readonly #conflicts: VersionConflict[] = [];
  #conflictsTotal = 0;
  /** Loads under way, each with its bundle directory, aborted by `close`. */
  readonly #loads = new Map<AbortController, string>();
  readonly #timeoutMs: number;
  #trust: BundleTrust;
  #closed = false;

  constructor(
    readonly root: string,
    trust: BundleTrust = {},
    options: RegistryOptions = {},
  ) {
    const timeoutMs = options.loadTimeoutMs ?? DEFAULT_BUNDLE_LOAD_TIMEOUT_MS;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1)
      throw new RangeError(`loadTimeoutMs must be a positive integer, not \`${String(timeoutMs)}\``);
    this.#timeoutMs = timeoutMs;
    this.#trust = trust;
    this.#pinStore = options.pins ?? new MemoryBundlePins();
  }

  /** The keys bundles are verified against; `reloadAll` may replace them. */
  get trust(): BundleTrust {
    return this.#trust;
  }

  /**
   * The bundle of `policyId@version`, where `version` may be an alias of the installed set.
   * @throws BundleError (BUNDLE_NOT_FOUND when there is no such policy version); StoreUnavailableError when its version
   *   cannot be pinned
   */
  get(policyId: string, version: string): Promise<LoadedBundle> {
    if (this.#aliases !== null) return this.#fromSet(policyId, version);
    const key = keyOf(policyId, version);
    const known = this.#bundles.get(key);
    if (known) return known;
    const loading = this.#load(policyId, version, this.#trust).then((bundle) => this.#admitOne(bundle));
    this.#bundles.set(key, loading);
    loading.catch(() => {
      // Unless a reload has put a good bundle in its place meanwhile.
      if (this.#bundles.get(key) === loading) this.#bundles.delete(key);
    });
    return loading;
  }

  /** Re-reads a bundle from the policies root; the new one replaces the old only when it passes every check. */
  async reload(policyId: string, version: string): Promise<{ readonly replaced: boolean; readonly error?: BundleError }> {
    try {
      const fresh = await this.#admitOne(await this.#load(policyId, version, this.#trust));
      this.#bundles.set(keyOf(policyId, version), Promise.resolve(fresh));
      return { replaced: true };
    } catch (e) {
      if (e instanceof BundleError) return { replaced: false, error: e };
      throw e;
    }
  }

  /**
   * Loads every bundle in the policies root (the start-up preflight): what loads and is pinned is served, what is not
   * is reported (and loaded again on its next request, as always).
   */
  async preload(): Promise<LoadReport> {
    const { bundles, refused } = await this.#loadRoot(this.#trust);
    const loaded: ServedBundle[] = [];
    for (const bundle of bundles) {
      const { policyId, version } = bundle.manifest;
      const refusal = await this.#pin(bundle).catch((e: unknown) => storeRefusal(policyId, version, e));
      if (refusal) {
        refused.push(refusal);
        continue;
      }
      this.#serve(bundle);
      this.#bundles.set(keyOf(policyId, version), Promise.resolve(bundle));
      loaded.push(served(bundle));
    }
    return { loaded, refused };
  }

  /**
   * Re-reads the whole policies root, verifying with `trust` (new bundle keys, say) or the current keys. All or
   * nothing: when every bundle passes and is pinned, they replace what was served (a version gone from disk is no
   * longer served) and `trust` becomes the registry's; otherwise nothing changes and the report says what was refused.
   */
  async reloadAll(trust: BundleTrust = this.#trust): Promise<LoadReport> {
    const { bundles, refused } = await this.#loadRoot(trust);
    if (refused.length === 0) {
      for (const bundle of bundles) {
        const { policyId, version } = bundle.manifest;
        const refusal = await this.#pin(bundle).catch((e: unknown) => storeRefusal(policyId, version, e));
        if (refusal) refused.push(refusal);
      }
    }
    if (refused.length > 0) return { loaded: [], refused };
    this.#trust = trust;
    this.#bundles = new Map();
    this.#admitted = new Map();
    for (const bundle of bundles) {
      this.#serve(bundle);
      this.#bundles.set(keyOf(bundle.manifest.policyId, bundle.manifest.version), Promise.resolve(bundle));
    }
    return { loaded: bundles.map(served), refused };
  }

  /**
   * Serves exactly `set` from now on (a remote source's verified index), in place of the policies root or the set
   * installed before. Nothing changes when a bundle conflicts with a version pinned to other bytes.
   * @throws BundleError (BUNDLE_VERSION_CONFLICT, BUNDLE_INVALID for an alias to a version the set lacks);
   *   StoreUnavailableError when a version cannot be pinned
   */
  async install(set: BundleSet): Promise<void> {
    const aliases = new Map(set.aliases.map((a) => [keyOf(a.policyId, a.alias), a.version]));
    for (const [alias, version] of aliases) {
      const policyId = alias.slice(0, alias.lastIndexOf("@"));
      if (!set.bundles.some((b) => b.manifest.policyId === policyId && b.manifest.version === version)) {
        throw new BundleError("BUNDLE_INVALID", `alias \`${alias}\` names \`${version}\`, which the set does not hold`, alias);
      }
    }
    for (const bundle of set.bundles) {
      const conflict = await this.#pin(bundle);
      if (conflict) throw conflict.error;
    }
    this.#admitted = new Map();
    this.#bundles = new Map();
    for (const bundle of set.bundles) {
      this.#serve(bundle);
      this.#bundles.set(keyOf(bundle.manifest.policyId, bundle.manifest.version), Promise.resolve(bundle));
    }
    this.#aliases = aliases;
  }

  /** The bundles served now (loaded and admitted), sorted by policy and version. */
  served(): ServedBundle[] {
    return [...this.#admitted.values()].map(served).sort((a, b) => (keyOf(a.policyId, a.version) < keyOf(b.policyId, b.version) ? -1 : 1));
  }

  /** The aliases served now (`policyId@alias` to version). */
  aliases(): BundleAlias[] {
    return [...(this.#aliases ?? [])].map(([alias, version]) => ({
      policyId: alias.slice(0, alias.lastIndexOf("@")),
      alias: alias.slice(alias.lastIndexOf("@") + 1),
      version,
    }));
  }

  /** The latest refused version conflicts, oldest first. */
  conflicts(): readonly VersionConflict[] {
    return [...this.#conflicts];
  }

  /** How many distinct version conflicts (a version, a refused bundle_hash) were refused since the registry was made. */
  get conflictsTotal(): number {
    return this.#conflictsTotal;
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
    for (const [load, dir] of this.#loads)
      load.abort(new BundleError("BUNDLE_INVALID", "the service is shutting down: the bundle load under way was abandoned", dir));
  }

  #fromSet(policyId: string, ref: string): Promise<LoadedBundle> {
    const version = this.#aliases?.get(keyOf(policyId, ref)) ?? ref;
    const known = this.#bundles.get(keyOf(policyId, version));
    return (
      known ??
      Promise.reject(
        new BundleError(
          "BUNDLE_NOT_FOUND",
          `no bundle for policy \`${policyId}\` version \`${ref}\` in the installed set`,
          keyOf(policyId, ref),
        ),
      )
    );
  }

  /** Pins `bundle` and serves it, or throws its conflict (INVARIANT (a version is immutable)). */
  async #admitOne(bundle: LoadedBundle): Promise<LoadedBundle> {
    const conflict = await this.#pin(bundle);
    if (conflict) throw conflict.error;
    this.#serve(bundle);
    return bundle;
  }

  #serve(bundle: LoadedBundle): void {
    this.#admitted.set(keyOf(bundle.manifest.policyId, bundle.manifest.version), bundle);
  }

  /**
   * Pins `bundle`'s hash to its version, or finds the other hash pinned: null when `bundle` may be served, else its
   * conflict (recorded for health).
   * @throws StoreUnavailableError from the pins' store
   */
  async #pin(bundle: LoadedBundle): Promise<(RefusedBundle & { readonly error: BundleError }) | null> {
    const { policyId, version, bundle_hash: hash } = bundle.manifest;
    const key = keyOf(policyId, version);
    const pinned = this.#pins.get(key) ?? (await this.#pinStore.claim(policyId, version, hash));
    this.#pins.set(key, pinned);
    if (pinned === hash) return null;
    // Counted once per refused bundle_hash: a conflicting bundle left on disk is refused again at each request for it.
    if (!this.#conflicts.some((c) => c.policyId === policyId && c.version === version && c.refusedHash === hash)) {
      this.#conflictsTotal += 1;
      this.#conflicts.push({ policyId, version, servedHash: pinned, refusedHash: hash, origin: bundle.dir, at: new Date().toISOString() });
      if (this.#conflicts.length > CONFLICTS_KEPT) this.#conflicts.shift();
    }
    const error = new BundleError(
      "BUNDLE_VERSION_CONFLICT",
      `\`${policyId}@${version}\` is pinned to bundle_hash \`${pinned}\`; a version is immutable, so \`${hash}\` is refused`,
      bundle.dir,
    );
    return { policyId, version, code: error.code, message: error.message, error };
  }

  /** Every bundle of the policies root, loaded with `trust`, and what was refused. Admits nothing. */
  async #loadRoot(trust: BundleTrust): Promise<{ bundles: LoadedBundle[]; refused: RefusedBundle[] }> {
    const bundles: LoadedBundle[] = [];
    const refused: RefusedBundle[] = [];
    const locations = await listBundleVersions(this.root);
    const results = await Promise.allSettled(locations.map((at) => this.#loadFrom(at, trust)));
    const byKey = new Map<string, LoadedBundle>();
    results.forEach((result, i) => {
      const { policyId, version } = locations[i]!;
      if (result.status === "rejected") {
        if (!(result.reason instanceof BundleError)) throw result.reason;
        // A version directory without a manifest holds sources not compiled yet: it is no bundle.
        if (result.reason.code === "BUNDLE_NOT_FOUND") return;
        refused.push({ policyId, version, code: result.reason.code, message: result.reason.message });
        return;
      }
      const other = byKey.get(keyOf(policyId, version));
      if (other && other.manifest.bundle_hash !== result.value.manifest.bundle_hash) {
        const why = `the policies root holds \`${policyId}@${version}\` twice, with bundle_hash \`${other.manifest.bundle_hash}\` and \`${result.value.manifest.bundle_hash}\``;
        refused.push({ policyId, version, code: "BUNDLE_VERSION_CONFLICT", message: why });
        return;
      }
      if (!other) bundles.push(result.value);
      byKey.set(keyOf(policyId, version), result.value);
    });
    return { bundles, refused };
  }

  /** One bundle from the policies root: its directory, or else its archive. */
  #load(policyId: string, version: string, trust: BundleTrust): Promise<LoadedBundle> {
    return this.#withinTimeout(join(this.root, policyId, version), async (signal) => {
      try {
        return await loadBundle(this.root, policyId, version, trust, { signal });
      } catch (e) {
        if (!(e instanceof BundleError) || e.code !== "BUNDLE_NOT_FOUND") throw e;
        const archive = await this.#loadArchive({ policyId, version, kind: "archive" }, trust, signal);
        if (archive === null) throw e;
        return archive;
      }
    });
  }

  #loadFrom(at: BundleLocation, trust: BundleTrust): Promise<LoadedBundle> {
    if (at.kind === "directory")
      return this.#withinTimeout(join(this.root, at.policyId, at.version), (signal) =>
        loadBundle(this.root, at.policyId, at.version, trust, { signal }),
      );
    return this.#withinTimeout(join(this.root, archiveFileName(at.policyId, at.version)), async (signal) => {
      const archive = await this.#loadArchive(at, trust, signal);
      if (archive === null)
        throw new BundleError("BUNDLE_NOT_FOUND", `no archive \`${archiveFileName(at.policyId, at.version)}\``, this.root);
      return archive;
    });
  }

  /** The archive `root/{policyId}@{version}.bundle.json`, verified; null when there is none. */
  async #loadArchive(at: BundleLocation, trust: BundleTrust, signal: AbortSignal): Promise<LoadedBundle | null> {
    const name = archiveFileName(at.policyId, at.version);
    const bytes = await readBundleFile(this.root, name, signal);
    if (bytes === null) return null;
    return loadBundleArchive(bytes, name, trust, { policyId: at.policyId, version: at.version });
  }

  /**
   * One load within the timeout. A read the system never completes (a hung disk, a network file system) cannot be
   * cancelled: the load stops at its next step and its result, should one come, is dropped; the caller is answered
   * when the timeout fires.
   */
  #withinTimeout(dir: string, load: (signal: AbortSignal) => Promise<LoadedBundle>): Promise<LoadedBundle> {
    if (this.#closed) return Promise.reject(new BundleError("BUNDLE_INVALID", "the policy registry is closed", dir));
    const started = performance.now();
    const controller = new AbortController();
    this.#loads.set(controller, dir);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new BundleError("BUNDLE_INVALID", `the bundle did not load within ${this.#timeoutMs} ms`, dir));
    }, this.#timeoutMs);
    // A pending load alone does not keep the process alive.
    timer.unref();
    let ended = false;
    const end = (outcome: BundleLoadOutcome): void => {
      if (ended) return;
      ended = true;
      this.loads.record(outcome, performance.now() - started);
    };
    return new Promise<LoadedBundle>((resolve, reject) => {
      controller.signal.addEventListener(
        "abort",
        () => {
          end(timedOut ? "timeout" : "abandoned");
          reject(controller.signal.reason);
        },
        { once: true },
      );
      load(controller.signal)
        .then(
          (bundle) => {
            end("loaded");
            resolve(bundle);
          },
          (e: unknown) => {
            end(e instanceof BundleError && e.code === "BUNDLE_NOT_FOUND" ? "not_found" : "refused");
            reject(e);
          },
        )
        .finally(() => {
          clearTimeout(timer);
          this.#loads.delete(controller);
        });
    });
  }
}

/** A version that could not be pinned (its store failed): not served now, loaded again on its next request. */
function storeRefusal(policyId: string, version: string, e: unknown): RefusedBundle {
  if (!(e instanceof StoreUnavailableError)) throw e;
  return { policyId, version, code: e.code, message: `its version cannot be pinned: ${e.message}` };
}
