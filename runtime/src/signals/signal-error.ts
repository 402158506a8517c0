/** One failed signal; `code` is a VAL code of docs/errors (docs/errors.md). */
export interface SignalError {
  readonly code: string;
  readonly signal: string;
  readonly message: string;
}
