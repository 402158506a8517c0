/** The vocabulary of the docs-snippet test (test/docs-snippets.e2e.test.ts): blocks of the docs, and what is done with each. */

/** A shell block of a doc: its file (from the repository root), the line of its opening fence, and its text. */
export interface ShellBlock {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/** Names one block: the doc file and what the block opens with (its first line without a trailing comment). */
export interface BlockRef {
  readonly file: string;
  readonly opens: string;
}

/** A block nobody runs here, and why. */
export interface Skip extends BlockRef {
  readonly reason: string;
}

/** Text of the block replaced before it runs: `from` must still be in the block, else the test fails. */
export interface Substitution {
  readonly from: string;
  readonly to: string;
  readonly why: string;
}

/**
 * A command of the block that runs until stopped (a sidecar in the foreground or with `&`): the harness runs it in the
 * background, waits until `ready` answers 200, and carries on with the block. `command` ends its line (a comment may follow).
 */
export interface Service {
  readonly command: string;
  readonly ready: string;
}

/** How one run of a block is made: its substitutions, the environment beyond the clone's, its services, its exit. */
export interface BlockRun {
  readonly substitutions: readonly Substitution[];
  readonly env?: Readonly<Record<string, string>>;
  readonly services?: readonly Service[];
  /** The exit code the block ends with as documented (default 0). */
  readonly exit?: number;
}

/** Blocks run together, in a fresh clone, with the checks that tell whether they did what the docs say. */
export interface Scenario {
  readonly title: string;
  readonly blocks: readonly BlockRef[];
  /** Needs the PostgreSQL of test/support/postgres.ts. */
  readonly postgres?: boolean;
  run(): Promise<void>;
}
