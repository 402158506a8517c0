import {
  CALENDAR_OPERATORS,
  expressionText,
  irOperands,
  prepareZones,
  type CalendarOp,
  type IrExpr,
  type IrNode,
  type PolicyIr,
  type ZoneTable,
} from "@writ/runtime";
import { NumberSet } from "../analysis/number-set.js";
import { irNodes, nowAsVariable } from "./ir-operands.js";

/**
 * Calendar fields in `writ diff` (docs/compiler.md "Calendar fields"). Each reading of a timestamp's calendar fields
 * (a signal's or `now`'s): an instant (`ts`, or `ts` plus or minus durations) in a zone whose table both versions embed
 * alike, is modelled by one more variable: the instant's minute of the local week, (ISO weekday - 1) × 1440 + minute
 * of the day, 0 to 10079, or BEYOND for an instant outside the horizon (EVAL-004). Each field is a function of it, so
 * conditions on the weekday, the hour and the minute of one instant relate exactly; the timestamp itself stays a
 * variable for its other readings, and calendar-link.ts links them in each box. Any other reading of a calendar field
 * is left opaque, with the reason.
 */
export const WEEK_MINUTES = 7 * 1440;
/** The state of an instant beyond the zone table's horizon: its fields fault. */
export const BEYOND = -1;

/** One reading of a timestamp's fields: the instant (the signal shifted by `shift` ms) and the zone. */
export interface CalendarReading {
  readonly signal: string;
  readonly instant: IrExpr;
  readonly shift: number;
  readonly zone: string;
  readonly table: ZoneTable;
}

/**
 * Each timestamp read by a calendar field (`now` as NOW_VARIABLE): how each of its readings (an instant and a zone) is
 * modelled, or why none is (the reason an atom gives).
 */
export function calendarReadings(irs: readonly PolicyIr[]): ReadonlyMap<string, readonly CalendarReading[] | string> {
  const readings = new Map<string, Map<string, { instant: IrExpr; zone: string }>>();
  const visit = (e: IrExpr): void => {
    if (e.op === "calendar") {
      for (const n of irNodes(e.arg)) {
        if (n.op !== "signal") continue;
        const reads = readings.get(n.name) ?? new Map<string, { instant: IrExpr; zone: string }>();
        readings.set(n.name, reads.set(readingKey(e.arg, e.zone), { instant: e.arg, zone: e.zone }));
      }
      return;
    }
    irOperands(e).forEach(visit);
  };
  for (const ir of irs) for (const r of ir.rules) visit(nowAsVariable(r.when));
  const out = new Map<string, readonly CalendarReading[] | string>();
  for (const [signal, reads] of readings) {
    const modelled: CalendarReading[] = [];
    let why: string | null = null;
    for (const { instant, zone } of reads.values()) {
      const shift = shiftOf(instant, signal);
      // A version that reads no field of the zone embeds no table for it: only the tables embedded are compared.
      const embedding = irs.filter((ir) => ir.zones?.tables[zone] !== undefined);
      const tables = embedding.map((ir) => JSON.stringify(ir.zones!.tables[zone]));
      const table = prepareZones(embedding[0]?.zones).get(zone);
      why ??=
        shift === null
          ? `the instant \`${expressionText(instant)}\` is not \`${signal}\` shifted by durations`
          : new Set(tables).size > 1
            ? `the table of \`${zone}\` differs between the versions (tzdata ${embedding.map((ir) => ir.zones!.tzdata).join(" and ")})`
            : table === undefined
              ? "no zone table"
              : null;
      if (shift !== null && table !== undefined) modelled.push({ signal, instant, shift, zone, table });
    }
    out.set(signal, why ?? modelled);
  }
  return out;
}

/** What tells two readings of one timestamp apart: the instant read and the zone. */
export const readingKey = (instant: IrExpr, zone: string): string => `${JSON.stringify(instant)} in ${zone}`;

/** The milliseconds `instant` adds to `signal` (`signal`, `signal + 30d`, `signal - 1h + 15m`); null for another form. */
function shiftOf(instant: IrExpr, signal: string): number | null {
  if (instant.op === "signal") return instant.name === signal ? 0 : null;
  if (instant.op !== "arith" || instant.kind !== "time" || instant.right.op !== "lit" || typeof instant.right.value !== "number")
    return null;
  const inner = shiftOf(instant.left, signal);
  if (inner === null) return null;
  return instant.fn === "add" ? inner + instant.right.value : instant.fn === "sub" ? inner - instant.right.value : null;
}

/** The field of a minute of the week. */
function fieldOf(fn: CalendarOp, weekMinute: number): number {
  const minute = weekMinute % 1440;
  if (fn === "weekday") return Math.floor(weekMinute / 1440) + 1;
  return fn === "local_hour" ? Math.floor(minute / 60) : minute;
}

/** The minutes of the week where the field's value is in `values`. */
export function weekMinutesWhere(fn: CalendarOp, values: NumberSet): NumberSet {
  let out = NumberSet.empty(true);
  let start: number | null = null;
  for (let v = 0; v <= WEEK_MINUTES; v++) {
    const holds = v < WEEK_MINUTES && values.has(fieldOf(fn, v));
    if (holds && start === null) start = v;
    if (!holds && start !== null) {
      out = out.union(NumberSet.span(true, start, v - 1));
      start = null;
    }
  }
  return out;
}

/** The values a field can take. */
export function fieldRange(fn: CalendarOp): NumberSet {
  return NumberSet.span(true, CALENDAR_OPERATORS[fn].least, CALENDAR_OPERATORS[fn].greatest);
}

export const isCalendarNode = (e: IrExpr): e is IrNode<"calendar"> => e.op === "calendar";
