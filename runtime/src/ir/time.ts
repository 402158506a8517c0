/**
 * Durations and instants (docs/language.md "Durations and timestamp arithmetic"). A duration is a whole number of
 * milliseconds; its units have fixed lengths (`d` is 86,400,000 ms: no months or years, whose lengths vary). An
 * instant is computed in milliseconds since 1970 (Date.parse, as the `timestamp` comparison domain reads it) and
 * written back as an RFC 3339 timestamp in UTC. Past the years RFC 3339 writes, up to ECMAScript's ±8.64e15 ms (about
 * ±275,000 years), it is written with an expanded year (`+010000-01-01T00:00:00.000Z`), which compares as an instant
 * too, so `opened_at + 30d` never faults for a timestamp signal; beyond, the result is out of range (EVAL-002).
 */
import { isTimestamp } from "../signals/timestamp.js";

export const DURATION_UNITS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as const;
export type DurationUnit = keyof typeof DURATION_UNITS;

export const isDurationUnit = (u: string): u is DurationUnit => Object.prototype.hasOwnProperty.call(DURATION_UNITS, u);

/** The instants an RFC 3339 timestamp with a four-digit year can name, offsets included, in milliseconds. */
export const MIN_INSTANT = Date.parse("0000-01-01T00:00:00+23:59");
export const MAX_INSTANT = Date.parse("9999-12-31T23:59:59.999-23:59");

/** The instants ECMAScript's dates hold: the range of an instant computed. */
export const INSTANT_LIMIT = 8.64e15;

/** The instants RFC 3339 writes in UTC (years 0000 to 9999): the range of the decision instant (`now`). */
export const MIN_DECISION_INSTANT = Date.parse("0000-01-01T00:00:00Z");
export const MAX_DECISION_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");
const Z_MIN = MIN_DECISION_INSTANT;
const Z_MAX = MAX_DECISION_INSTANT;
const EDGE_OFFSET_MS = (23 * 60 + 59) * 60_000;

/** A duration in the largest unit that writes it whole: 2592000000 is `30d`, 90000 is `90s`. */
export function durationText(ms: number): string {
  const sign = ms < 0 ? "-" : "";
  const magnitude = Math.abs(ms);
  for (const [unit, length] of Object.entries(DURATION_UNITS)) {
    if (magnitude % length === 0 && magnitude !== 0) return `${sign}${magnitude / length}${unit}`;
  }
  return "0ms";
}

/**
 * An instant as an RFC 3339 timestamp the signals schema accepts: in UTC, or with the offset `+23:59` / `-23:59` at the
 * edges where UTC needs a fifth digit of year; milliseconds written only when there are some. Beyond what RFC 3339
 * writes, ECMAScript's expanded years; null past ±INSTANT_LIMIT.
 */
export function instantText(ms: number): string | null {
  if (!Number.isInteger(ms) || Math.abs(ms) > INSTANT_LIMIT) return null;
  if (ms < MIN_INSTANT || ms > MAX_INSTANT) return new Date(ms).toISOString();
  const [local, suffix] = ms < Z_MIN ? [ms + EDGE_OFFSET_MS, "+23:59"] : ms > Z_MAX ? [ms - EDGE_OFFSET_MS, "-23:59"] : [ms, "Z"];
  const iso = new Date(local).toISOString();
  return `${iso.slice(0, ms % 1000 === 0 ? 19 : 23)}${suffix}`;
}

/**
 * The decision instant as `now` reads it and an attestation's `issuedAt` writes it: the clock's `toISOString()`, in UTC
 * with its milliseconds (`2026-06-01T12:00:00.000Z`), so `now` and `issuedAt` are one text. A Date outside the years
 * RFC 3339 writes in UTC (or `new Date(NaN)`) is no clock's: a caller's error, TypeError, never a value.
 */
export function decisionInstant(clock: Date): string {
  return new Date(decisionMs(clock)).toISOString();
}

/** The decision instant's milliseconds, refused as decisionInstant refuses it. */
export function decisionMs(clock: Date): number {
  const ms = clock.getTime();
  if (!(ms >= MIN_DECISION_INSTANT && ms <= MAX_DECISION_INSTANT)) {
    throw new TypeError("the decision instant is not a date of the years 0000 to 9999 (UTC)");
  }
  return ms;
}

/** What a given decision instant must be, for the messages that refuse one. */
export const DECISION_INSTANT_FORM =
  "an RFC 3339 timestamp with an offset, from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, such as 2026-06-01T12:00:00Z";

/**
 * A decision instant a person gives (`writ eval --now`, a test case's `now`, the playground's): an RFC 3339 timestamp, as
 * a timestamp signal is, whose instant a clock can be (decisionInstant); null otherwise (DECISION_INSTANT_FORM says why).
 */
export function parseDecisionInstant(text: string): Date | null {
  if (!isTimestamp(text)) return null;
  const ms = Date.parse(text);
  return ms >= MIN_DECISION_INSTANT && ms <= MAX_DECISION_INSTANT ? new Date(ms) : null;
}
