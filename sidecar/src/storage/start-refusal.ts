/**
 * A start the store refused for a reason the operator must act on, with a code a supervisor can match: main.ts logs it
 * as `code` of the `failed to start` line (exit code 1). InstanceInUseError (instance-in-use.ts) on every engine, and
 * an engine's own (PostgreSQL's UnfitSessionsError); main.ts knows none of them by name.
 */
export abstract class StartRefusal extends Error {
  abstract readonly code: string;
}
