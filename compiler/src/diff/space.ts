import { expressionText, readsNow, type IrExpr, type IrNode, type IrZones, type PolicyIr, type Scalar } from "@writ/runtime";
import type { SignalSet } from "../analysis/signal-set.js";
import { NumberSet } from "../analysis/number-set.js";
import { BEYOND, WEEK_MINUTES, calendarReadings, readingKey, type CalendarReading } from "./calendar.js";
import { DOUBLES, INTEGERS, type NumberDomain } from "./number-domain.js";
import { orderedDomains } from "./ordered-domain.js";
import {
  MAX_NUMBER,
  NOW_DOMAIN,
  NOW_VARIABLE,
  acceptedOnlyBy,
  commonDomain,
  signalDomain,
  type DomainKind,
  type SignalDomain,
  type SignalsSchema,
} from "./signal-domain.js";

export type Side = "old" | "new";

/** One policy version as `writ diff` compares it: its IR and its signals schema (a bundle holds both). */
export interface PolicyVersion {
  readonly ir: PolicyIr;
  readonly schema: SignalsSchema;
}

/**
 * A variable of the compared signal space. A signal both versions declare with values in common is one variable
 * (its states those both schemas accept), so a witness is one request valid for both; a signal only one declares is
 * a variable only that version reads; a signal whose declarations share no state is two variables, one per version.
 */
export interface Variable {
  readonly id: string;
  readonly kind: DomainKind;
  readonly universe: SignalSet;
  /** How its numbers are held (number-domain.ts): doubles, or whole units (integers, instants, a decimal's). */
  readonly numbers: NumberDomain;
  /** The signal it stands for in each version; null where that version does not read it. */
  readonly names: Readonly<Record<Side, string | null>>;
  /**
   * Set on a variable that stands for no signal but for the value of arithmetic on several `number` signals
   * (`daily_total + amount`), which IEEE-754 rounds (formula.ts): its states over-approximate the values the
   * signals give it, so a box narrowed on it needs a witness found by evaluation.
   */
  readonly term?: IrExpr;
  /**
   * Set on a variable that stands for the minute of the local week of one reading of a timestamp's calendar fields
   * (calendar.ts): linked to the timestamp's own variable `signal` in each box (calendar-link.ts).
   */
  readonly calendar?: { readonly reading: CalendarReading; readonly signal: Variable };
}

export type Example = { readonly absent: true } | { readonly value: Scalar };

/** How a signal's declaration changed: added, removed, or accepting other values; shown before the decisions. */
export interface SignalChange {
  readonly signal: string;
  readonly change: "added" | "removed" | "changed";
  readonly old: string | null;
  readonly new: string | null;
  /** A state the old schema accepts and the new refuses, and the converse; absent when there is none. */
  readonly oldOnly?: Example;
  readonly newOnly?: Example;
  /** Set when the two declarations share no state: a witness then sends this signal differently to each. */
  readonly disjoint?: true;
  /** Set when a declaration is not fully modelled (see SignalDomain.unmodelled): the states accepted were not compared. */
  readonly undecided?: string;
}

export interface SignalSpace {
  readonly variables: readonly Variable[];
  readonly changes: readonly SignalChange[];
  /** Parts of the schemas the domains do not model (see SignalDomain.unmodelled). */
  readonly unmodelled: readonly string[];
  variableOf(side: Side, signal: string): Variable;
  /** The variable for the value of `term` over `signals` (see Variable.term): one per term and signals, either side. */
  termVariable(term: IrExpr, signals: readonly Variable[]): Variable;
  /** Whether the versions embed different tables for `zone`: their fields are then different functions. */
  tableDiffers(zone: string): boolean;
  /** Instants (ms) where a zone's offset differs between the versions' tables, and their neighbours: witness candidates. */
  readonly zoneChanges: readonly number[];
  /** How the calendar field `node` reads a timestamp (calendar.ts): modelled, or why not; undefined when none reads it. */
  calendarReading(signal: string, node: IrNode<"calendar">): CalendarReading | string | undefined;
  /** The minute-of-the-week variable of a modelled reading: one per reading, either side. */
  calendarVariable(reading: CalendarReading, signal: Variable): Variable;
}

export function signalSpace(versions: Readonly<Record<Side, PolicyVersion>>): SignalSpace {
  // `now` is a variable of both versions when either reads it, so neither shows it as a signal added or removed.
  const now = irReadsNow(versions.old.ir) || irReadsNow(versions.new.ir);
  const ordered = orderedDomains([versions.old.ir, versions.new.ir]);
  const domains = { old: domainsOf(versions.old, now, ordered), new: domainsOf(versions.new, now, ordered) };
  const names = [...new Set([...domains.old.keys(), ...domains.new.keys()])];
  const variables: Variable[] = [];
  const changes: SignalChange[] = [];
  const bySide = { old: new Map<string, Variable>(), new: new Map<string, Variable>() };
  const add = (v: Variable): void => {
    variables.push(v);
    if (v.names.old !== null) bySide.old.set(v.names.old, v);
    if (v.names.new !== null) bySide.new.set(v.names.new, v);
  };
  for (const name of names) {
    const [o, n] = [domains.old.get(name), domains.new.get(name)];
    if (o && n) {
      const common = commonDomain(o, n);
      if (common) add({ id: name, kind: common.kind, universe: common.accepted, numbers: common.numbers, names: { old: name, new: name } });
      else {
        add({ id: `${name} (old)`, kind: o.kind, universe: o.accepted, numbers: o.numbers, names: { old: name, new: null } });
        add({ id: `${name} (new)`, kind: n.kind, universe: n.accepted, numbers: n.numbers, names: { old: null, new: name } });
      }
      const unmodelled = o.unmodelled ?? n.unmodelled;
      if (unmodelled !== null) {
        // The sets compared would not be the schemas': say the declarations differ, not how.
        if (o.declaration !== n.declaration)
          changes.push({ signal: name, change: "changed", old: o.declaration, new: n.declaration, undecided: unmodelled });
        continue;
      }
      const oldOnly = acceptedOnlyBy(o, n);
      const newOnly = acceptedOnlyBy(n, o);
      if (oldOnly || newOnly || !common) {
        changes.push({
          signal: name,
          change: "changed",
          old: o.declaration,
          new: n.declaration,
          ...(oldOnly ? { oldOnly } : {}),
          ...(newOnly ? { newOnly } : {}),
          ...(common ? {} : { disjoint: true as const }),
        });
      }
    } else if (o) {
      add({ id: name, kind: o.kind, universe: o.accepted, numbers: o.numbers, names: { old: name, new: null } });
      changes.push({ signal: name, change: "removed", old: o.declaration, new: null });
    } else if (n) {
      add({ id: name, kind: n.kind, universe: n.accepted, numbers: n.numbers, names: { old: null, new: name } });
      changes.push({ signal: name, change: "added", old: null, new: n.declaration });
    }
  }
  const unmodelled = [...domains.old.values(), ...domains.new.values()].flatMap((d) => (d.unmodelled ? [d.unmodelled] : []));
  const readings = calendarReadings([versions.old.ir, versions.new.ir]);
  const zoneChanges = changedInstants(versions.old.ir.zones, versions.new.ir.zones);
  return {
    variables,
    changes,
    unmodelled: [...new Set(unmodelled)],
    termVariable(term, signals) {
      const id = `${expressionText(term)} (${signals.map((v) => v.id).join(", ")})`;
      const known = variables.find((v) => v.id === id);
      if (known) return known;
      const values = NumberSet.span(false, -MAX_NUMBER, MAX_NUMBER);
      const v: Variable = {
        id,
        kind: "number",
        universe: { absent: signals.some((s) => s.universe.absent), values },
        numbers: DOUBLES,
        names: { old: null, new: null },
        term,
      };
      variables.push(v);
      return v;
    },
    calendarReading(signal, node) {
      const found = readings.get(signal);
      return typeof found === "string" ? found : found?.find((r) => readingKey(r.instant, r.zone) === readingKey(node.arg, node.zone));
    },
    zoneChanges,
    tableDiffers: (zone) => JSON.stringify(versions.old.ir.zones?.tables[zone]) !== JSON.stringify(versions.new.ir.zones?.tables[zone]),
    calendarVariable(reading, signal) {
      const id = `minute of the week of ${expressionText(reading.instant)} in ${reading.zone}`;
      const known = variables.find((v) => v.id === id);
      if (known) return known;
      const v: Variable = {
        id,
        kind: "number",
        universe: { absent: signal.universe.absent, values: NumberSet.span(true, BEYOND, WEEK_MINUTES - 1) },
        numbers: INTEGERS,
        names: { old: null, new: null },
        calendar: { reading, signal },
      };
      variables.push(v);
      return v;
    },
    variableOf(side, signal) {
      const v = bySide[side].get(signal);
      if (!v) throw new Error(`internal: \`${signal}\` is not a signal of the ${side} version`);
      return v;
    },
  };
}

export function irReadsNow(ir: PolicyIr): boolean {
  return ir.rules.some((r) => readsNow(r.when));
}

/**
 * Where the versions' tables differ: each transition one has and the other lacks (a moved clock change), and the
 * half past each hour of the day after it, so every local hour the offsets disagree on is a candidate.
 */
/** Candidates from changed tables a search tries at most: a new tz release moves a few changes, not hundreds. */
const MAX_ZONE_HINTS = 480;

function changedInstants(old: IrZones | undefined, next: IrZones | undefined): number[] {
  const out: number[] = [];
  for (const zone of Object.keys(old?.tables ?? {})) {
    const [a, b] = [old?.tables[zone], next?.tables[zone]];
    if (a === undefined || b === undefined) continue;
    const keys = (pairs: readonly (readonly [number, number])[]) => new Set(pairs.map((p) => p.join(" ")));
    const [inA, inB] = [keys(a), keys(b)];
    for (const [at, offset] of [...a, ...b]) {
      if (inA.has(`${at} ${offset}`) && inB.has(`${at} ${offset}`)) continue;
      for (let hour = 0; hour < 24 && out.length < MAX_ZONE_HINTS; hour++) out.push(at * 1000 + hour * 3_600_000 + 1_800_000);
    }
  }
  return out;
}

function domainsOf(version: PolicyVersion, now: boolean, ordered: ReturnType<typeof orderedDomains>): Map<string, SignalDomain> {
  const required = new Set(version.schema.required);
  const out = new Map<string, SignalDomain>(now ? [[NOW_VARIABLE, NOW_DOMAIN]] : []);
  for (const [name, signal] of Object.entries(version.ir.signals)) {
    const domain = ordered(name, signal, required.has(name));
    out.set(name, domain ?? signalDomain(name, signal, version.schema.properties[name] ?? {}, required.has(name)));
  }
  return out;
}
