import { isoWeekday, localMs, minuteOfDay, offsetAt, type ZoneTable } from "@writ/runtime";
import { NumberSet } from "../analysis/number-set.js";
import { isEmpty, present } from "../analysis/signal-set.js";
import { BEYOND, WEEK_MINUTES, type CalendarReading } from "./calendar.js";
import type { Box } from "./search.js";
import { instantText } from "./signal-domain.js";
import type { Variable } from "./space.js";
import { ABSENT, type State } from "./witness.js";

/**
 * The link between a timestamp and its minute of the local week (calendar.ts), which the search keeps as two variables:
 * the timestamp's states (narrowed by comparisons and octagon closure with other instants) and the week minute's
 * (narrowed by the calendar fields). A box the search yields is then non-empty exactly when some instant of the
 * timestamp's states has a local week minute among the week minute's states: `linkBox` narrows the week minute to the
 * minutes the instants reach (walking the zone table's offset segments, so a span shorter than a week or across a clock
 * change reaches only some), BEYOND where the instants leave the horizon, and `linkAssignment` sends a witness the
 * instant of its week minute. The timestamp's states are the exact projection of a closed box (closure.ts), so every
 * instant among them extends to a point of the box's linear constraints.
 */
const MINUTE_MS = 60_000;
/** Minute 0 of 1970 (a Thursday) is minute 3 × 1440 of its week. */
const EPOCH_WEEK_MINUTE = 3 * 1440;
/** Monday 5 January 2026, 00:00 local: a witness's instant is looked for from there on first, so witnesses read alike. */
const FIRST_WEEK = Date.UTC(2026, 0, 5);

/** The minute of the local week of the instant `ms`, or BEYOND outside the table's horizon: what the runtime reads. */
export function weekMinuteAt(table: ZoneTable, ms: number): number {
  const offset = offsetAt(table, ms);
  if (offset === null) return BEYOND;
  const local = localMs(ms, offset);
  return (isoWeekday(local) - 1) * 1440 + minuteOfDay(local);
}

/** The week minute of the local minute numbered `m` since 1970. */
const weekMinuteOf = (m: number): number => (((m + EPOCH_WEEK_MINUTE) % WEEK_MINUTES) + WEEK_MINUTES) % WEEK_MINUTES;
const modWeek = (n: number): number => ((n % WEEK_MINUTES) + WEEK_MINUTES) % WEEK_MINUTES;

/** Instants `a` to `b` (ms) under one offset (ms) of the table. */
interface Piece {
  readonly a: number;
  readonly b: number;
  readonly offset: number;
}

/** The pieces of the instants `lo` to `hi` within the horizon, one per offset segment of the table, in order. */
function* piecesOf(table: ZoneTable, lo: number, hi: number): Generator<Piece> {
  const [start, end] = [Math.max(lo, table.from * 1000), Math.min(hi, table.to * 1000 - 1)];
  if (start > end) return;
  const { instants, offsets } = table;
  let k = 0;
  while (k + 1 < instants.length && instants[k + 1]! * 1000 <= start) k++;
  for (; k < instants.length && instants[k]! * 1000 <= end; k++) {
    const next = k + 1 < instants.length ? instants[k + 1]! * 1000 - 1 : end;
    yield { a: Math.max(start, instants[k]! * 1000), b: Math.min(end, next), offset: offsets[k]! * 1000 };
  }
}

/** The instants of `signal`'s set as the reading's instant (shifted), span by span. */
function instantSpans(values: NumberSet, reading: CalendarReading): { lo: number; hi: number }[] {
  return values.spans.map((s) => ({ lo: s.lo + reading.shift, hi: s.hi + reading.shift }));
}

/** The week minutes (and BEYOND) the instants of `values`, the signal's, reach under the reading. */
export function reachableWeekMinutes(values: NumberSet, reading: CalendarReading): NumberSet {
  const { table } = reading;
  const week = NumberSet.span(true, 0, WEEK_MINUTES - 1);
  let out = NumberSet.empty(true);
  for (const { lo, hi } of instantSpans(values, reading)) {
    if (lo < table.from * 1000 || hi >= table.to * 1000) out = out.union(NumberSet.points(true, [BEYOND]));
    for (const { a, b, offset } of piecesOf(table, lo, hi)) {
      if (week.intersect(out.complement()).isEmpty()) break;
      const [first, last] = [Math.floor((a + offset) / MINUTE_MS), Math.floor((b + offset) / MINUTE_MS)];
      if (last - first + 1 >= WEEK_MINUTES) out = out.union(week);
      else {
        const [from, to] = [weekMinuteOf(first), weekMinuteOf(last)];
        out = out.union(
          from <= to ? NumberSet.span(true, from, to) : NumberSet.span(true, from, WEEK_MINUTES - 1).union(NumberSet.span(true, 0, to)),
        );
      }
    }
  }
  return out;
}

/**
 * An instant of `values` (the signal's, before the reading's shift) whose week minute is `state`: the first from the
 * week of 5 January 2026 on, else the last before it; for BEYOND the horizon's end, or the last instant before its
 * start. Null when none is.
 */
export function instantWith(state: number, values: NumberSet, reading: CalendarReading): number | null {
  const { table, shift } = reading;
  const spans = instantSpans(values, reading);
  if (state === BEYOND) {
    const after = values.intersect(NumberSet.span(true, table.to * 1000 - shift, Infinity)).spans[0]?.lo;
    const before = values.intersect(NumberSet.span(true, -Infinity, table.from * 1000 - 1 - shift)).spans.at(-1)?.hi;
    return after ?? before ?? null;
  }
  const anchor = FIRST_WEEK - (offsetAt(table, FIRST_WEEK) ?? 0) * 1000;
  for (const { lo, hi } of spans)
    for (const p of piecesOf(table, Math.max(lo, anchor), hi)) {
      const first = Math.floor((p.a + p.offset) / MINUTE_MS);
      const t = Math.max(p.a, (first + modWeek(state - weekMinuteOf(first))) * MINUTE_MS - p.offset);
      if (t <= p.b) return t - shift;
    }
  for (const { lo, hi } of [...spans].reverse())
    for (const p of [...piecesOf(table, lo, Math.min(hi, anchor - 1))].reverse()) {
      const last = Math.floor((p.b + p.offset) / MINUTE_MS);
      const t = Math.max(p.a, (last - modWeek(weekMinuteOf(last) - state)) * MINUTE_MS - p.offset);
      if (t <= p.b && weekMinuteOf(Math.floor((t + p.offset) / MINUTE_MS)) === state) return t - shift;
    }
  return null;
}

/** `box` with each week minute narrowed to those its timestamp's states reach, absent only where both may be; null when a link is empty. */
export function linkBox(box: Box, variables: readonly Variable[]): Box | null {
  const states = new Map(box.states);
  for (const v of variables) {
    if (v.calendar === undefined) continue;
    const { signal, reading } = v.calendar;
    const [week, instants] = [states.get(v.id)!, states.get(signal.id)!];
    const absent = week.absent && instants.absent;
    const reached = { absent, values: (week.values as NumberSet).intersect(reachableWeekMinutes(instants.values as NumberSet, reading)) };
    if (isEmpty(reached)) return null;
    states.set(v.id, reached);
    states.set(signal.id, { absent, values: instants.values });
  }
  return { ...box, states };
}

/**
 * Sets each linked timestamp of `assignment` to an instant of its week minute's state there (absent with it), and
 * returns `box` with that instant as the timestamp's only state, so a point of its linear constraints keeps it.
 */
export function linkAssignment(box: Box, assignment: Map<string, State>, variables: readonly Variable[]): Box {
  const states = new Map(box.states);
  for (const v of variables) {
    const state = assignment.get(v.id);
    if (v.calendar === undefined || state === undefined) continue;
    const { signal, reading } = v.calendar;
    const t = state === ABSENT ? null : instantWith(state as number, box.states.get(signal.id)!.values as NumberSet, reading);
    assignment.set(signal.id, t === null ? ABSENT : instantText(t));
    if (t !== null) states.set(signal.id, present(NumberSet.points(true, [t])));
  }
  return { ...box, states };
}
