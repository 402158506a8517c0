/**
 * A remote bundle source (docs/bundles.md, "Serving from a sidecar"): the sidecar polls
 * `{SERVICE_BUNDLE_SOURCE_URL}index.json`, and when it changed, verifies it and every archive it names before the
 * registry serves any of them, then keeps the set on local disk.
 *
 * INVARIANT (nothing unverified is served): a set is installed only when the index verifies against the bundle keys,
 * is not expired and is newer than the set served, every archive it names verifies (signature required) with the
 * `bundle_hash` the index names, and no version conflicts with one served (the registry's INVARIANT (a version is
 * immutable)). Anything else is refused whole: the set served before keeps serving.
 * INVARIANT (no rollback): a set's serial only grows. An index with a lower serial, or the same serial with other
 * bytes, is refused, across restarts too (the cache keeps the serial served).
 */
import type { Agent } from "undici";
import {
  BundleError,
  MAX_ARCHIVE_BYTES,
  MAX_MESSAGE_CHARACTERS,
  StoreUnavailableError,
  MAX_INDEX_BYTES,
  archiveFileName,
  loadBundleArchive,
  readSourceIndex,
  shown,
  type BundleTrust,
  type LoadedBundle,
  type PolicyRegistry,
  type PublicKey,
} from "@writ/runtime";
import type { RemoteSourceStatus, ReloadResponse } from "@writ/wire";
import { SourceCache, type SourceSet } from "./source-cache.js";
import { SourceFetchError, displayUrl, fetchFromSource, sourceAgent } from "./source-fetch.js";

/** A remote bundle source (`SERVICE_BUNDLE_SOURCE_URL`, docs/bundles.md), in place of the policies root. */
export interface BundleSourceConfig {
  /** The base URL of `index.json` and the archives, ending with `/`; may hold credentials: never logged whole. */
  readonly url: string;
  readonly pollIntervalMs: number;
  /** One fetch (the index or an archive) must finish within it. */
  readonly fetchTimeoutMs: number;
  /** Where the last good set is kept, so a restart without the network still serves it. */
  readonly cacheDir: string;
}

export const DEFAULT_BUNDLE_SOURCE = { pollIntervalMs: 30_000, fetchTimeoutMs: 10_000 } as const;

/** The longest wait between polls after failures, as a multiple of the poll interval. */
const MAX_BACKOFF_INTERVALS = 8;

/** `installed`: a newer set is served; `unchanged`: the source serves the set served; otherwise why not. */
export type PollOutcome = NonNullable<ReloadResponse["poll"]>;

export interface RemoteSourceLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export class RemoteBundleSource {
  readonly #config: BundleSourceConfig;
  readonly #registry: PolicyRegistry;
  readonly #log: RemoteSourceLog;
  readonly #cache: SourceCache;
  readonly #agent: Agent;
  readonly #base: URL;
  #keys: readonly PublicKey[];
  #served: SourceSet | null = null;
  /**
   * The newest set verified: the one served, or a cached one that could not be installed (its versions could not be
   * pinned). Its serial is the floor below which every index is a rollback, across restarts too.
   */
  #latest: SourceSet | null = null;
  /** The ETag of the last index answered (served or refused): an unchanged one is a 304. */
  #etag: string | null = null;
  /** Why the index the source serves now was refused; null when it serves the set served. */
  #refusal: string | null = null;
  #status: { reached: boolean; lastSuccessAt: string | null; lastError: string | null; failures: number } = {
    reached: false,
    lastSuccessAt: null,
    lastError: null,
    failures: 0,
  };
  #timer: NodeJS.Timeout | null = null;
  /** Polls and reloads run one at a time, in order. */
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(config: BundleSourceConfig, registry: PolicyRegistry, keys: readonly PublicKey[], log: RemoteSourceLog) {
    this.#config = config;
    this.#registry = registry;
    this.#keys = keys;
    this.#log = log;
    this.#cache = new SourceCache(config.cacheDir);
    this.#agent = sourceAgent(config.fetchTimeoutMs);
    this.#base = new URL(config.url);
  }

  /** Serves the cached set when there is one, polls once, and keeps polling. */
  async start(): Promise<void> {
    await this.#serialized(() => this.#installCached(this.#keys));
    await this.pollNow();
  }

  status(): RemoteSourceStatus {
    return { ...this.#status, serial: this.#served?.index.serial ?? null };
  }

  /** Polls now (after whatever poll is under way), then every interval. */
  pollNow(): Promise<PollOutcome> {
    return this.#serialized(async () => {
      const outcome = await this.#poll();
      this.#schedule();
      return outcome;
    });
  }

  /**
   * Verifies the set served again with `keys` (rotated bundle keys, say) and polls. All or nothing: when the set
   * served does not verify with them, nothing changes and the old keys stay.
   * @throws BundleError when the set served does not verify with `keys`
   */
  async reload(keys: readonly PublicKey[]): Promise<PollOutcome> {
    await this.#serialized(async () => {
      const served = this.#served;
      if (served !== null) {
        const trust: BundleTrust = { trustedKeys: keys, requireSignature: true };
        readSourceIndex(served.indexBytes, keys, { now: new Date(), origin: `served ${displayUrl(this.#indexUrl())}` });
        for (const entry of served.index.bundles) {
          const name = archiveFileName(entry.policyId, entry.version);
          await loadBundleArchive(served.archives.get(name)!, `served ${name}`, trust, entry);
        }
      }
      this.#keys = keys;
    });
    return this.pollNow();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#queue.catch(() => undefined);
    await this.#agent.close();
  }

  #serialized<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(run, run);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  #indexUrl(): URL {
    return new URL("index.json", this.#base);
  }

  async #installCached(keys: readonly PublicKey[]): Promise<void> {
    let cached: SourceSet | null;
    try {
      cached = await this.#cache.read(keys, new Date());
    } catch (e) {
      this.#log.error(`the cached bundle set in \`${this.#config.cacheDir}\` is refused: ${message(e)}; waiting for the source`);
      return;
    }
    if (cached === null) return;
    this.#latest = cached;
    try {
      await this.#registry.install({ bundles: cached.bundles, aliases: cached.index.aliases });
    } catch (e) {
      this.#log.error(`the cached bundle set serial ${cached.index.serial} is not served: ${message(e)}; waiting for the source`);
      return;
    }
    this.#served = cached;
    this.#log.info(
      `serving the cached bundle set, serial ${cached.index.serial} (${cached.bundles.length} bundles), until the source answers`,
    );
  }

  async #poll(): Promise<PollOutcome> {
    if (this.#closed) return { result: "unchanged" };
    const url = this.#indexUrl();
    let answer;
    try {
      answer = await fetchFromSource(this.#agent, url, {
        timeoutMs: this.#config.fetchTimeoutMs,
        maxBytes: MAX_INDEX_BYTES,
        etag: this.#etag,
      });
    } catch (e) {
      return this.#failed("unreachable", e);
    }
    this.#status.reached = true;
    this.#status.lastSuccessAt = new Date().toISOString();
    if (!answer.changed) return this.#succeeded({ result: "unchanged" });
    if (this.#served !== null && equalBytes(answer.bytes, this.#served.indexBytes)) {
      this.#etag = answer.etag;
      this.#refusal = null;
      return this.#succeeded({ result: "unchanged" });
    }
    try {
      const set = await this.#verify(answer.bytes);
      await this.#registry.install({ bundles: set.bundles, aliases: set.index.aliases });
      this.#etag = answer.etag;
      this.#refusal = null;
      const previous = this.#served;
      this.#served = set;
      this.#latest = set;
      this.#log.info(
        `serving bundle set serial ${set.index.serial} (${set.bundles.length} bundles${previous ? `, was serial ${previous.index.serial}` : ""})`,
      );
      await this.#keep(set, previous);
      return this.#succeeded({ result: "installed" });
    } catch (e) {
      // An archive that could not be fetched, or versions the store could not pin, are tried again at the next poll.
      if (e instanceof SourceFetchError || e instanceof StoreUnavailableError) return this.#failed("unreachable", e);
      if (!(e instanceof BundleError)) throw e;
      // Remembered: the same refused index is not fetched again until it changes, and the refusal stays reported.
      this.#etag = answer.etag;
      this.#refusal = message(e);
      return this.#failed("refused", e);
    }
  }

  /** The set `indexBytes` names, fully verified (INVARIANT (nothing unverified is served), INVARIANT (no rollback)). */
  async #verify(indexBytes: Uint8Array): Promise<SourceSet> {
    const { index } = readSourceIndex(indexBytes, this.#keys, { now: new Date(), origin: displayUrl(this.#indexUrl()) });
    const latest = this.#latest;
    if (
      latest !== null &&
      (index.serial < latest.index.serial || (index.serial === latest.index.serial && !equalBytes(indexBytes, latest.indexBytes)))
    ) {
      const why =
        index.serial < latest.index.serial
          ? `is older than serial ${latest.index.serial}, which was served: a rollback`
          : "was served before with other content";
      throw new BundleError("INDEX_INVALID", `the source's index has serial ${index.serial}, which ${why}`, displayUrl(this.#indexUrl()));
    }
    const served = this.#served;
    const trust: BundleTrust = { trustedKeys: this.#keys, requireSignature: true };
    const bundles: LoadedBundle[] = [];
    const archives = new Map<string, Uint8Array>();
    for (const entry of index.bundles) {
      const name = archiveFileName(entry.policyId, entry.version);
      const known = served?.bundles.find((b) => b.manifest.policyId === entry.policyId && b.manifest.version === entry.version);
      if (known && known.manifest.bundle_hash === entry.bundle_hash) {
        bundles.push(known);
        archives.set(name, served!.archives.get(name)!);
        continue;
      }
      const url = new URL(encodeURIComponent(name), this.#base);
      const answer = await fetchFromSource(this.#agent, url, { timeoutMs: this.#config.fetchTimeoutMs, maxBytes: MAX_ARCHIVE_BYTES });
      if (!answer.changed) throw new SourceFetchError(`\`${displayUrl(url)}\` answered 304 to a request without a validator`);
      // The entry as the expectation: the archive must be that policy version with the bundle_hash the index signs.
      const loading = performance.now();
      try {
        bundles.push(await loadBundleArchive(answer.bytes, displayUrl(url), trust, entry));
        this.#registry.loads.record("loaded", performance.now() - loading);
      } catch (e) {
        this.#registry.loads.record("refused", performance.now() - loading);
        throw e;
      }
      archives.set(name, answer.bytes);
    }
    return { index, indexBytes, bundles, archives };
  }

  /** Keeps the set on disk; a set served but not kept still serves, and the failure is reported. */
  async #keep(set: SourceSet, previous: SourceSet | null): Promise<void> {
    try {
      await this.#cache.write(set, previous);
    } catch (e) {
      this.#log.error(
        `bundle set serial ${set.index.serial} is served but could not be kept in \`${this.#config.cacheDir}\`: ${message(e)}`,
      );
    }
  }

  /** The source answered; the error reported is the refusal of the index it serves, if it was refused. */
  #succeeded(outcome: PollOutcome): PollOutcome {
    this.#status.failures = 0;
    this.#status.lastError = this.#refusal;
    return outcome;
  }

  #failed(result: "refused" | "unreachable", e: unknown): PollOutcome {
    const why = message(e);
    this.#status.failures += 1;
    this.#status.lastError = why;
    (result === "refused" ? this.#log.error : this.#log.warn).call(
      this.#log,
      `bundle source ${result === "refused" ? "refused" : "unreachable"}: ${why}; the set served keeps serving`,
    );
    return { result, message: why };
  }

  /** The next poll: the interval less up to a fifth, or after failures a jittered backoff of up to 8 intervals. */
  #schedule(): void {
    if (this.#closed) return;
    if (this.#timer) clearTimeout(this.#timer);
    const interval = this.#config.pollIntervalMs;
    const backoff = Math.min(2 ** Math.max(0, this.#status.failures - 1), MAX_BACKOFF_INTERVALS);
    const delay = this.#status.failures === 0 ? interval * (0.8 + 0.2 * Math.random()) : interval * backoff * (0.5 + 0.5 * Math.random());
    this.#timer = setTimeout(() => void this.pollNow(), delay);
    this.#timer.unref();
  }
}

/**
 * What is reported of a failure (`lastError`, a poll's outcome, a log line): its message, at most
 * MAX_MESSAGE_CHARACTERS. The runtime clips every name a source sent in its messages; this bounds the rest (an HTTP
 * client's error, say), so `/health` stays small whatever a source sends.
 */
function message(e: unknown): string {
  return shown(e instanceof Error ? e.message : String(e), MAX_MESSAGE_CHARACTERS);
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}
