/**
 * The fields of a local time (zones.ts): milliseconds since 1970 as if the zone's wall clock were UTC, so the fields
 * are those of a UTC date. Apart from zones.ts so the operator table (operators.ts) can name them without a cycle.
 */
const DAY_MS = 86_400_000;

/** The local time of an instant in ms with an offset in seconds. */
export const localMs = (ms: number, offset: number): number => ms + offset * 1000;

const dayOf = (local: number): number => Math.floor(local / DAY_MS);
const msOfDay = (local: number): number => local - dayOf(local) * DAY_MS;

/** ISO weekday of a local time: Monday 1 to Sunday 7 (1970-01-01 was a Thursday). */
export const isoWeekday = (local: number): number => ((((dayOf(local) + 3) % 7) + 7) % 7) + 1;
export const minuteOfDay = (local: number): number => Math.floor(msOfDay(local) / 60_000);
export const hourOfDay = (local: number): number => Math.floor(msOfDay(local) / 3_600_000);
