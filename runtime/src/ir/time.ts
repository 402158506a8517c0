/**
 * Durations and instants (docs/language.md "Durations and timestamp arithmetic"). A duration is a whole number of
 * milliseconds; its units have fixed lengths (`d` is 86,400,000 ms: no months or years, whose lengths vary). An
 * instant is computed in milliseconds since 1970 (Date.parse, as the `timestamp` comparison domain reads it) and
 * written back as an RFC 3339 timestamp in UTC; one outside the years 0000 to 9999, which RFC 3339 cannot write, is
 * out of range (EVAL-002).
 */
export const DURATION_UNITS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as const;
export type DurationUnit = keyof typeof DURATION_UNITS;

export const isDurationUnit = (u: string): u is DurationUnit => Object.prototype.hasOwnProperty.call(DURATION_UNITS, u);

/** The earliest and latest instants an RFC 3339 timestamp writes. */
export const MIN_INSTANT = Date.parse("0000-01-01T00:00:00Z");
export const MAX_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");

/** A duration in the largest unit that writes it whole: 2592000000 is `30d`, 90000 is `90s`. */
export function durationText(ms: number): string {
  const sign = ms < 0 ? "-" : "";
  const magnitude = Math.abs(ms);
  for (const [unit, length] of Object.entries(DURATION_UNITS)) {
    if (magnitude % length === 0 && magnitude !== 0) return `${sign}${magnitude / length}${unit}`;
  }
  return "0ms";
}

/** An instant as an RFC 3339 timestamp in UTC, milliseconds written only when there are some; null out of range. */
export function instantText(ms: number): string | null {
  if (!Number.isInteger(ms) || ms < MIN_INSTANT || ms > MAX_INSTANT) return null;
  const iso = new Date(ms).toISOString();
  return ms % 1000 === 0 ? `${iso.slice(0, 19)}Z` : iso;
}
