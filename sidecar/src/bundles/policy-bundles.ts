/**
 * Where a sidecar's policy bundles come from and whether it is ready to serve them: the policies root or a
 * remote source, the start-up preflight, reload (SIGHUP and `POST /admin/reload`) and the readiness `/health` reports.
 *
 * INVARIANT (a failed reload changes nothing): a reload reads the bundle keys and every bundle again and replaces what
 * is served only when all of them verify; otherwise the bundles and keys served before stay, and the reload says why.
 * Reloads run one at a time. A request in flight keeps the bundle it started with (the registry's own invariant).
 */
import { statSync } from "node:fs";
import {
  BundleError,
  MAX_MESSAGE_CHARACTERS,
  PolicyRegistry,
  shown,
  type BundlePins,
  type BundleTrust,
  type LoadReport,
  type PublicKey,
} from "@writ/runtime";
import type { BundlesDetail, BundlesHealth, ReloadResponse } from "@writ/wire";
import { readBundleKeys } from "./bundle-keys.js";
import { RemoteBundleSource, type BundleSourceConfig, type RemoteSourceLog } from "./remote-source.js";

/** Where the policy bundles come from and how they are trusted: the sidecar's settings that PolicyBundles reads. */
export interface BundleSettings {
  readonly policiesRoot: string;
  /** SPKI PEM files of the keys a `bundle.sig` must verify against. */
  readonly bundleKeyFiles: readonly string[];
  readonly requireSignedBundles: boolean;
  /** Bundles come from this remote source instead of the policies root; null: from `policiesRoot`. */
  readonly bundleSource: BundleSourceConfig | null;
  /** How long one load of a policy bundle may take before the request is refused and the next one loads again. */
  readonly bundleLoadTimeoutMs: number;
}

/** How long a look at the policies root is reused by `/health`, which is unauthenticated and must stay cheap. */
const ROOT_CHECK_TTL_MS = 1_000;

export class PolicyBundles {
  readonly registry: PolicyRegistry;
  readonly #config: BundleSettings;
  readonly #remote: RemoteBundleSource | null;
  #queue: Promise<unknown> = Promise.resolve();
  #rootChecked: { at: number; present: boolean } | null = null;

  private constructor(config: BundleSettings, registry: PolicyRegistry, remote: RemoteBundleSource | null) {
    this.#config = config;
    this.registry = registry;
    this.#remote = remote;
  }

  /**
   * The registry and, with a remote source, the source, not started yet. `keys`: the bundle keys (`readBundleKeys`);
   * `pins`: the store's bundle pins, or null to pin in memory (development, or no durable store).
   */
  static create(config: BundleSettings, keys: readonly PublicKey[], pins: BundlePins | null, log: RemoteSourceLog): PolicyBundles {
    const trust: BundleTrust = { trustedKeys: keys, requireSignature: config.requireSignedBundles || config.bundleSource !== null };
    const registry = new PolicyRegistry(config.policiesRoot, trust, {
      loadTimeoutMs: config.bundleLoadTimeoutMs,
      ...(pins ? { pins } : {}),
    });
    const remote = config.bundleSource === null ? null : new RemoteBundleSource(config.bundleSource, registry, keys, log);
    return new PolicyBundles(config, registry, remote);
  }

  /**
   * The preflight: loads and verifies every bundle of the policies root, or serves the remote source's cached set and
   * polls it once. Never throws for a bundle: what was refused is in the notices, and readiness says the rest.
   */
  async start(notices: string[]): Promise<void> {
    if (this.#remote) {
      await this.#remote.start();
      return;
    }
    const report = await this.registry.preload();
    notices.push(
      `policies root: ${report.loaded.length} bundle${report.loaded.length === 1 ? "" : "s"} verified${report.refused.length ? `, ${report.refused.length} refused` : ""}`,
    );
    for (const { policyId, version, code, message } of report.refused)
      notices.push(`bundle \`${policyId}@${version}\` refused (${code}): ${message}`);
  }

  health(): BundlesHealth {
    const served = this.registry.served().length;
    const conflicts = this.registry.conflictsTotal;
    if (this.#remote) {
      const remote = this.#remote.status();
      const problem =
        remote.serial !== null
          ? undefined
          : remote.reached
            ? "the bundle source's set was refused"
            : "the bundle source has not been reached";
      return { ready: problem === undefined, source: "remote", served, conflicts, ...(problem ? { problem } : {}), remote };
    }
    const problem = !this.#rootPresent() ? "the policies root is missing" : served === 0 ? "no bundle verifies" : undefined;
    return { ready: problem === undefined, source: "directory", served, conflicts, ...(problem ? { problem } : {}) };
  }

  detail(): BundlesDetail {
    return {
      ...this.health(),
      bundles: this.registry.served(),
      aliases: this.registry.aliases(),
      recentConflicts: this.registry.conflicts(),
    };
  }

  /** Reads the bundle keys and every bundle again (see the header); never throws for a bundle or a key. */
  reload(): Promise<ReloadResponse> {
    const run = () => this.#reload();
    const next = this.#queue.then(run, run);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    this.registry.close();
    await this.#remote?.close();
  }

  async #reload(): Promise<ReloadResponse> {
    let keys;
    try {
      keys = await readBundleKeys(this.#config.bundleKeyFiles);
    } catch (e) {
      return this.#failed([{ bundle: "SERVICE_BUNDLE_KEYS", code: "BUNDLE_KEYS_INVALID", message: (e as Error).message }]);
    }
    if (this.#remote) {
      try {
        const poll = await this.#remote.reload(keys);
        return { ok: poll.result !== "refused", served: this.registry.served().length, refused: [], poll };
      } catch (e) {
        if (!(e instanceof BundleError)) throw e;
        // The set served came from the source: its refusal is bounded like the source's own (RemoteBundleSource).
        return this.#failed([{ bundle: e.bundleDir, code: e.code, message: shown(e.message, MAX_MESSAGE_CHARACTERS) }]);
      }
    }
    let report: LoadReport;
    try {
      report = await this.registry.reloadAll({ ...this.registry.trust, trustedKeys: keys });
    } catch (e) {
      if (!(e instanceof BundleError)) throw e;
      return this.#failed([{ bundle: "SERVICE_POLICIES_ROOT", code: e.code, message: e.message }]);
    }
    if (report.refused.length > 0) {
      return this.#failed(
        report.refused.map(({ policyId, version, code, message }) => ({ bundle: `${policyId}@${version}`, code, message })),
      );
    }
    return { ok: true, served: report.loaded.length, refused: [] };
  }

  #failed(refused: ReloadResponse["refused"]): ReloadResponse {
    return { ok: false, served: this.registry.served().length, refused };
  }

  #rootPresent(): boolean {
    const now = Date.now();
    if (this.#rootChecked && now - this.#rootChecked.at < ROOT_CHECK_TTL_MS) return this.#rootChecked.present;
    let present: boolean;
    try {
      present = statSync(this.#config.policiesRoot).isDirectory();
    } catch {
      present = false;
    }
    this.#rootChecked = { at: now, present };
    return present;
  }
}
