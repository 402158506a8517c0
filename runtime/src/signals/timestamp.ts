/**
 * Timestamps: RFC 3339 date-time with a mandatory offset, a real calendar date, and no leap second (the
 * evaluator compares instants with Date.parse, which has no leap seconds). One definition serves the
 * compiler (timestamp literals, the signals schema's `pattern`) and the runtime (the schema's
 * `format: date-time`), so a value is a timestamp in one place exactly when it is in the other.
 */
export const TIMESTAMP_PATTERN =
  "^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d+)?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)$";

/** TIMESTAMP_PATTERN on V8's engine: linear, the pattern being fixed (validate.ts says why it may run there). */
export const TIMESTAMP_SHAPE = new RegExp(TIMESTAMP_PATTERN, "u");

export function isTimestamp(s: string): boolean {
  if (!TIMESTAMP_SHAPE.test(s)) return false;
  const year = Number(s.slice(0, 4));
  const month = Number(s.slice(5, 7));
  const day = Number(s.slice(8, 10));
  return day <= daysInMonth(year, month) && !Number.isNaN(Date.parse(s));
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
