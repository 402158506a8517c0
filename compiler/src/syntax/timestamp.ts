/**
 * RFC 3339 date-time with a mandatory offset, as JSON Schema pattern source. The signals schema uses it
 * for `timestamp` signals and the type checker for timestamp literals, so both accept the same strings.
 */
export const TIMESTAMP_PATTERN =
  "^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d:([0-5]\\d|60)(\\.\\d+)?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)$";

const timestamp = new RegExp(TIMESTAMP_PATTERN, "u");

export function isTimestamp(s: string): boolean {
  return timestamp.test(s) && !Number.isNaN(Date.parse(s));
}
