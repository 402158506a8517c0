/** Where a command writes; tests pass buffers, the binary passes the process streams. */
export interface CliIo {
  readonly cwd: string;
  out(line: string): void;
  err(line: string): void;
}

/** Exit codes (docs/cli.md). */
export const EXIT = {
  ok: 0,
  /** `writ fmt --check` found files that are not in canonical form. */
  unformatted: 1,
  badArguments: 2,
  compileFailed: 3,
  testsFailed: 4,
  /** `writ verify`: the artifact does not verify against the pinned keys. */
  notVerified: 5,
  internal: 70,
} as const;

/** A failure the user can fix: printed as one line, never with a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.badArguments,
  ) {
    super(message);
  }
}
