/**
 * What a storage engine declares about its settings (docs/storage-engines.md): its `SERVICE_STORE` kind, the variables
 * only it reads, how it reads its part of the environment, and whether it can keep the audit trail so configured.
 * Read at start-up with the rest of the configuration, so it never loads the engine's driver.
 */
import type { Env } from "../env.js";

export interface EngineSettings<C extends { readonly kind: string }> {
  readonly kind: C["kind"];
  /** Variables only this engine reads: set while another engine is chosen, they are refused rather than ignored. */
  readonly variables: readonly string[];
  /** Where the engine keeps its state, for messages: "database", "data dir". */
  readonly what: string;
  /** @throws ConfigError naming the variable and what it accepts */
  parse(env: Env, context: { readonly cwd: string; readonly dataDir: string | null }): C;
  /** null: the audit trail can be kept with these settings; else why not (a start-up error when SERVICE_AUDIT is on). */
  auditRefusal(config: C): string | null;
  /** null: several processes of one sidecar may share the store so configured (SERVICE_PROCESSES); else why not. */
  processesRefusal(config: C): string | null;
}
