/**
 * The periodic work of every audit log (LMDB and PostgreSQL alike): `save` the counts kept in memory (API calls,
 * aggregated security events) every `saveMs` (default 1,000 ms), and `prune` the records past their retention every
 * `pruneMs` (default 60,000 ms). The timers are unref'd: a pending count must not keep the process alive; a log saves
 * what they have not at close, after `stop()`.
 */
export class AuditHousekeeping {
  readonly #timers: readonly NodeJS.Timeout[];

  constructor(
    work: { save(): void; prune(): Promise<unknown> },
    every: { readonly saveMs?: number | undefined; readonly pruneMs?: number | undefined } = {},
  ) {
    this.#timers = [
      setInterval(() => work.save(), every.saveMs ?? 1_000),
      setInterval(() => void work.prune().catch(() => undefined), every.pruneMs ?? 60_000),
    ];
    for (const timer of this.#timers) timer.unref();
  }

  stop(): void {
    for (const timer of this.#timers) clearInterval(timer);
  }
}
