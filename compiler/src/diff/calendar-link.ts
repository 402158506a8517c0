import { isoWeekday, minuteOfDay, offsetAt, type ZoneTable } from "@writ/runtime";
import { NumberSet } from "../analysis/number-set.js";
import { present } from "../analysis/signal-set.js";
import { BEYOND, WEEK_MINUTES, type CalendarReading } from "./calendar.js";
import type { Box } from "./search.js";
import { instantText } from "./signal-domain.js";
import type { Variable } from "./space.js";
import { ABSENT, type State } from "./witness.js";

/**
 * The link between a timestamp and the minute of the local week of each of its calendar readings (calendar.ts), which
 * the search keeps as separate variables: the timestamp's states, narrowed by comparisons and by octagon closure with
 * other instants (for a variable of linear constraints, the exact projection of the closed box: closure.ts), and each
 * week minute's, narrowed by the fields. `linkBox` narrows each week minute to those the instants reach, walking the
 * zone table's offset segments (a span shorter than a week, or across a clock change, reaches only some; BEYOND where
 * it leaves the horizon), and, for several readings of one timestamp, scans the instants for one that gives each a
 * state of its own: a box with none is empty. `linkAssignment` sends a witness an instant of its chosen week minute.
 */
const MINUTE_MS = 60_000;
const WEEK_MS = WEEK_MINUTES * MINUTE_MS;
/** Monday 5 January 2026, 00:00 local: a witness's instant is looked for from there on first, so witnesses read alike. */
const FIRST_WEEK = Date.UTC(2026, 0, 5);

/** The week minute of the local minute numbered `m` since 1970, by the runtime's own fields. */
function weekMinuteOf(m: number): number {
  const local = m * MINUTE_MS;
  return (isoWeekday(local) - 1) * 1440 + minuteOfDay(local);
}
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

/** What one reading of a timestamp must give: its week minute (or BEYOND) among `allowed`. */
export interface Condition {
  readonly reading: CalendarReading;
  readonly allowed: NumberSet;
}

/**
 * An instant of `values` (the signal's) where every condition holds: the first from the week of 5 January 2026 on,
 * else the first from a week, four weeks, a year before it, else the first of all. Null when none is.
 */
export function instantWhere(values: NumberSet, conditions: readonly Condition[]): number | null {
  const { table, shift } = conditions[0]!.reading;
  const anchor = FIRST_WEEK - (offsetAt(table, FIRST_WEEK) ?? 0) * 1000 - shift;
  for (const back of [0, 1, 4, 52]) {
    const t = firstFrom(values, conditions, anchor - back * WEEK_MS);
    if (t !== null) return t;
  }
  return firstFrom(values, conditions, -Infinity);
}

/** The offset (ms) of a reading's instant at the signal's `t`, or null beyond the horizon, and the next `t` it may change at. */
function offsetFrom(reading: CalendarReading, t: number): { offset: number | null; until: number } {
  const { table, shift } = reading;
  const x = t + shift;
  if (x < table.from * 1000) return { offset: null, until: table.from * 1000 - shift };
  if (x >= table.to * 1000) return { offset: null, until: Infinity };
  const { instants, offsets } = table;
  let [lo, hi] = [0, instants.length - 1];
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (instants[mid]! * 1000 <= x) lo = mid;
    else hi = mid - 1;
  }
  const next = lo + 1 < instants.length ? instants[lo + 1]! : table.to;
  return { offset: offsets[lo]! * 1000, until: next * 1000 - shift };
}

/** The least number of minutes, at least 1, from week minute `w` to one of `allowed`; null when it has none. */
function minutesToNext(w: number, allowed: NumberSet): number | null {
  let best: number | null = null;
  for (const s of allowed.spans) {
    if (s.hi < 0) continue;
    const lo = Math.max(s.lo, 0);
    const d = w + 1 >= lo && w + 1 <= s.hi ? 1 : modWeek(lo - w) || WEEK_MINUTES;
    if (best === null || d < best) best = d;
  }
  return best;
}

/**
 * The first instant of `values` from `from` on where every condition holds. Between two changes of any reading's
 * offset the conditions repeat every week, so each such stretch is scanned for a week at most, jumping to where the
 * first condition that fails next holds.
 */
function firstFrom(values: NumberSet, conditions: readonly Condition[], from: number): number | null {
  for (const span of values.spans) {
    let t = Math.max(span.lo, from);
    while (t <= span.hi) {
      const at = conditions.map((c) => ({ c, ...offsetFrom(c.reading, t) }));
      const end = Math.min(span.hi, ...at.map((a) => a.until - 1));
      const beyond = at.filter((a) => a.offset === null);
      const within = at.filter((a) => a.offset !== null);
      if (beyond.every((a) => a.c.allowed.has(BEYOND))) {
        const limit = Math.min(end, t + WEEK_MS + MINUTE_MS);
        for (let u = t; u <= limit;) {
          const minuteOf = (a: (typeof within)[number]): number => Math.floor((u + a.c.reading.shift + a.offset!) / MINUTE_MS);
          const failing = within.find((a) => !a.c.allowed.has(weekMinuteOf(minuteOf(a))));
          if (failing === undefined) return u;
          const m = minuteOf(failing);
          const d = minutesToNext(weekMinuteOf(m), failing.c.allowed);
          if (d === null) break;
          u = (m + d) * MINUTE_MS - failing.c.reading.shift - failing.offset!;
        }
      }
      t = end + 1;
    }
  }
  return null;
}

/** The week-minute variables of each linked timestamp, by the timestamp's variable. */
function groups(variables: readonly Variable[]): Map<Variable, Variable[]> {
  const out = new Map<Variable, Variable[]>();
  for (const v of variables) if (v.calendar) out.set(v.calendar.signal, [...(out.get(v.calendar.signal) ?? []), v]);
  return out;
}

/**
 * `box` with each week minute narrowed to those its timestamp's states reach, absent only where the timestamp may be;
 * null when no instant of the timestamp gives every reading of it a state of its own (readings in two zones or at
 * two instants are decided together).
 */
export function linkBox(box: Box, variables: readonly Variable[]): Box | null {
  const states = new Map(box.states);
  for (const [signal, weeks] of groups(variables)) {
    const instants = states.get(signal.id)!;
    const absent = instants.absent && weeks.every((w) => states.get(w.id)!.absent);
    const conditions: Condition[] = [];
    for (const w of weeks) {
      const reading = w.calendar!.reading;
      const allowed = (states.get(w.id)!.values as NumberSet).intersect(reachableWeekMinutes(instants.values as NumberSet, reading));
      states.set(w.id, { absent, values: allowed });
      conditions.push({ reading, allowed });
    }
    states.set(signal.id, { absent, values: instants.values });
    const some =
      conditions.every((c) => !c.allowed.isEmpty()) &&
      (weeks.length === 1 || instantWhere(instants.values as NumberSet, conditions) !== null);
    if (!some && !absent) return null;
    if (!some) for (const id of [signal.id, ...weeks.map((w) => w.id)]) states.set(id, { absent, values: NumberSet.empty(true) });
  }
  return { ...box, states };
}

/**
 * Sets each linked timestamp of `assignment` to an instant where its first reading has the state the assignment gives
 * it and the others one of theirs (any instant of the box where that one has none), absent with it; returns `box` with
 * that instant as the timestamp's only state, so a point of its linear constraints keeps it.
 */
export function linkAssignment(box: Box, assignment: Map<string, State>, variables: readonly Variable[]): Box {
  const states = new Map(box.states);
  for (const [signal, weeks] of groups(variables)) {
    const state = assignment.get(weeks[0]!.id);
    if (state === undefined) continue;
    const values = box.states.get(signal.id)!.values as NumberSet;
    const conditions = weeks.map((w) => ({ reading: w.calendar!.reading, allowed: box.states.get(w.id)!.values as NumberSet }));
    const chosen =
      state === ABSENT ? [] : [{ ...conditions[0]!, allowed: NumberSet.points(true, [state as number]) }, ...conditions.slice(1)];
    const t = state === ABSENT ? null : (instantWhere(values, chosen) ?? instantWhere(values, conditions));
    assignment.set(signal.id, t === null ? ABSENT : instantText(t));
    if (t !== null) states.set(signal.id, present(NumberSet.points(true, [t])));
  }
  return { ...box, states };
}
