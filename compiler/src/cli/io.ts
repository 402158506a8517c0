/** Where a command writes; tests pass buffers, the binary passes the process streams. */
export interface CliIo {
  readonly cwd: string;
  out(line: string): void;
  err(line: string): void;
}

/** Exit codes (docs/compiler.md). */
export const EXIT = {
  ok: 0,
  /** `writ fmt --check` found files that are not in canonical form. */
  unformatted: 1,
  /** `writ eval`: the policy's signals schema refuses the signals. */
  signalsRefused: 1,
  /** `writ diff`: the two versions decide some request differently, or accept different signals. */
  different: 1,
  badArguments: 2,
  compileFailed: 3,
  testsFailed: 4,
  /** `writ verify`: the artifact does not verify against the pinned keys. */
  notVerified: 5,
  /** `writ diff`: no difference was found, but some region could be neither shown different nor ruled out. */
  undecided: 6,
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

/**
 * The binary's I/O on the process streams. A closed pipe (`writ test policies | head -1`) is not an error: the lines
 * after it are dropped, the command still finishes (a compile still writes its bundles) and exits with its own code.
 */
export function processIo(cwd: string): CliIo {
  const out = lineWriter(process.stdout);
  const err = lineWriter(process.stderr);
  return { cwd, out, err };
}

function lineWriter(stream: NodeJS.WriteStream): (line: string) => void {
  let open = true;
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
    open = false;
  });
  return (line) => {
    if (open) stream.write(`${line}\n`);
  };
}
