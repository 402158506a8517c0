/**
 * A storage engine, as the registry (registry.ts) carries it: its settings, how its backend opens, the commands of
 * `writ-sidecar` it adds and its series of `/metrics` (docs/storage-engines.md). The module is read at start-up with
 * the configuration: it reaches its backend and its commands' code by dynamic `import()` only, so an engine that is not
 * chosen never loads its driver.
 */
import type { ScrapedSeries } from "../observability/series.js";
import type { BackendOpener, StorageBackend } from "./backend.js";
import type { EngineSettings } from "./engine-settings.js";

/** A command of `writ-sidecar` an engine adds: `writ-sidecar <name> <operands…>`, run instead of the service. */
export interface EngineCommand {
  readonly name: string;
  /** What each operand is, as `--help` shows it (`<data-dir>`): another number of operands is refused (exit code 2). */
  readonly operands: readonly string[];
  /** Its line in `--help`. */
  readonly summary: string;
  /**
   * Does it, `say` writing a line of progress on stdout; it resolves once done (exit code 0) and rejects with why it
   * failed (one line on stderr, exit code 1).
   */
  run(operands: readonly string[], env: NodeJS.ProcessEnv, say: (line: string) => void): Promise<void>;
}

export interface StorageEngine<C extends { readonly kind: string }, B extends StorageBackend = StorageBackend> {
  readonly settings: EngineSettings<C>;
  /** Loads its backend's opener (the engine's driver with it): only once the engine is chosen. */
  open(): Promise<BackendOpener<C, B>>;
  readonly commands?: readonly EngineCommand[];
  /** Its series of `/metrics` (observability/series.ts), read from its opened backend at each scrape. */
  metrics?(backend: B): readonly ScrapedSeries[];
  /**
   * Whether `error`, thrown or rejected outside any call the sidecar awaits, is its driver's report of a failed write
   * that its stores already answered (503): main.ts logs it and runs on, where any other such error shuts it down.
   */
  failedWrite?(error: unknown): boolean;
}
