/**
 * One failed signal; `code` is a VAL code of docs/errors (docs/errors.md). The wire's `SignalErrorDetail`, declared
 * here too: the signal validator is part of the portable entry that the compiler and the playground bundle, whose
 * declaration files then need no TypeBox (sdk/test/wire-types.test.ts holds the two equal).
 */
export interface SignalError {
  readonly code: string;
  readonly signal: string;
  readonly message: string;
}
