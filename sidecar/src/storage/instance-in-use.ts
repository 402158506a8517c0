/**
 * Two live sidecars never share one audit record log (docs/audit.md, "One log per sidecar instance"): the log's
 * owner is one process, which sequences what it holds in memory and signs the log's checkpoints. A start that finds
 * the log of its instance id owned by another live process is refused with this error (exit code 1, `failed to
 * start`), on either store:
 * - LMDB: the data dir's lock held by another process (storage/lmdb/data-dir-lock.ts), or another live process's open
 *   mark in the data dir's log (storage/lmdb/record-log-storage.ts, open-marks.ts);
 * - PostgreSQL: the instance lock of the id held by another session (postgres/connection/instance-session.ts).
 * A process that crashed owns nothing: the kernel released its lock and its mark is stale (a zombie's too), its
 * session (and lock) ended with its connection.
 */
import { StartRefusal } from "./start-refusal.js";

export class InstanceInUseError extends StartRefusal {
  readonly code = "INSTANCE_IN_USE" as const;
  readonly instanceId: string;

  /** `owner`: who holds it, as far as the store can tell (a process id and host, a database session). */
  constructor(instanceId: string, owner: string, remedy: string) {
    super(
      `the audit record log \`${instanceId}\` is in use by another live sidecar (${owner}): two sidecars must not share one log; ${remedy}`,
    );
    this.name = "InstanceInUseError";
    this.instanceId = instanceId;
  }
}
