import { within } from "../analysis/signal-set.js";
import {
  canFault,
  createSignalValidator,
  decisionInstant,
  expressionText,
  OTHERWISE_RULE_ID,
  preparePolicy,
  type Scalar,
  type Verdict,
} from "@writ/runtime";
import { DomainLimitError } from "../analysis/language.js";
import { linkAssignment, linkBox } from "./calendar-link.js";
import { all, type Constraint } from "./constraint-tree.js";
import { constraint } from "./constraint.js";
import { formulaOf, type Formula } from "./formula.js";
import { nowAsVariable } from "./ir-operands.js";
import { NOW_VARIABLE } from "./signal-domain.js";
import { Search, SearchLimitError, type Box } from "./search.js";
import { signalSpace, type PolicyVersion, type Side, type SignalChange, type SignalSpace, type Variable } from "./space.js";
import { E, F, T, U } from "./truth.js";
import { aimAtBoundary, candidates, linearPoint, random, requestsOf, simplify, type Assignment, type State } from "./witness.js";

/**
 * What decides in one version: a rule, the `otherwise` (rule `otherwise`), nothing (`undecided`, SYS-006), or a fault
 * in a rule's condition (`fault`, docs/language.md "Faults"), which ends the evaluation at that rule without a verdict.
 */
export interface Outcome {
  readonly rule: string;
  readonly verdict: Verdict | "undecided" | "fault";
  readonly reason: string | null;
}

/** A request on which the two versions decide differently, checked by evaluating both. */
export interface Witness {
  /** The decision instant both versions were evaluated at, as `now` reads it; only when either version reads `now`. */
  readonly now?: string;
  /** The signals as sent to the new version (and to the old one, unless `oldSignals` is given). */
  readonly signals: Record<string, Scalar>;
  /** The signals as sent to the old version, when they differ: it does not declare some of `signals`, or declares one with no value in common. */
  readonly oldSignals?: Record<string, Scalar>;
  /** Whether `signals` itself is valid for both versions' schemas. */
  readonly validForBoth: boolean;
}

/** Where the old version decides by `old` and the new by `new`, and the outcomes differ. */
export interface Region {
  readonly old: Outcome;
  readonly new: Outcome;
  readonly witness: Witness;
}

/** A pair of outcomes `writ diff` could neither prove impossible nor show with a witness. */
export interface UndecidedRegion {
  readonly old: Outcome;
  readonly new: Outcome;
  readonly reasons: readonly string[];
}

export interface GovernsChange {
  readonly old: { readonly action: string; readonly binding: readonly string[] };
  readonly new: { readonly action: string; readonly binding: readonly string[] };
}

export interface PolicyDiff {
  /** `equivalent`: same contract, same schema, same outcome for every request; `undecided`: no difference found, some region undecided. */
  readonly result: "equivalent" | "different" | "undecided";
  /** The governed action or its binding signals changed; null when they did not. */
  readonly governs: GovernsChange | null;
  readonly signals: readonly SignalChange[];
  readonly regions: readonly Region[];
  readonly undecided: readonly UndecidedRegion[];
}

export interface DiffOptions {
  /** Boxes one pair of outcomes may visit before it is left undecided. */
  readonly maxVisits?: number;
  /** Boxes with opaque atoms a pair may try a witness in, and candidate requests per box. */
  readonly maxBoxes?: number;
  readonly triesPerBox?: number;
}

/**
 * Compares two versions of a policy exactly (docs/compiler.md "writ diff"): for every pair (old rule i, new rule j) whose
 * outcomes differ, whether some request valid for both is decided by i in the old version and by j in the new, shown
 * by a witness both versions were run on; or why that could not be settled.
 */
export function diffPolicies(versions: Readonly<Record<Side, PolicyVersion>>, options: DiffOptions = {}): PolicyDiff {
  const space = signalSpace(versions);
  const sides = { old: sideOf(versions.old, "old", space), new: sideOf(versions.new, "new", space) };
  const regions: Region[] = [];
  const undecided: UndecidedRegion[] = [];
  for (let i = 0; i < sides.old.outcomes.length; i++) {
    for (let j = 0; j < sides.new.outcomes.length; j++) {
      const [o, n] = [sides.old.outcomes[i]!, sides.new.outcomes[j]!];
      if (o.rule === n.rule && o.verdict === n.verdict && o.reason === n.reason) continue;
      const found = compare(space, sides, i, j, options);
      if ("witness" in found) regions.push({ old: o, new: n, witness: found.witness });
      else if (found.reasons.length > 0) undecided.push({ old: o, new: n, reasons: found.reasons });
    }
  }
  const governs = governsChange(versions);
  const different = regions.length > 0 || space.changes.some((c) => c.undecided === undefined) || governs !== null;
  const unsettled = undecided.length > 0 || space.changes.some((c) => c.undecided !== undefined);
  return {
    result: different ? "different" : unsettled ? "undecided" : "equivalent",
    governs,
    signals: space.changes,
    regions,
    undecided,
  };
}

interface SideModel {
  /** The rules' outcomes, then the catch-all's, then a fault in each rule whose condition can fault. */
  readonly outcomes: readonly Outcome[];
  readonly rules: readonly Formula[];
  /** The outcome that decides a request: an index into `outcomes`; -1 when the schema refuses it. */
  decide(request: Record<string, Scalar>): number;
  /** The constraint "outcome `i` decides", by index. */
  decidedBy(i: number): Constraint;
}

function sideOf(version: PolicyVersion, side: Side, space: SignalSpace): SideModel {
  const { ir } = version;
  const outcomes: Outcome[] = ir.rules.map((r) => ({ rule: r.id, verdict: r.verdict, reason: r.reason }));
  outcomes.push(
    ir.otherwise ? { rule: OTHERWISE_RULE_ID, ...ir.otherwise } : { rule: OTHERWISE_RULE_ID, verdict: "undecided", reason: null },
  );
  /** The rule each fault outcome is in, by outcome index. */
  const faultRule = new Map<number, number>();
  const faultOutcome = new Map<string, number>();
  ir.rules.forEach((r, i) => {
    if (!canFault(r.when)) return;
    faultRule.set(outcomes.length, i);
    faultOutcome.set(r.id, outcomes.length);
    outcomes.push({ rule: r.id, verdict: "fault", reason: null });
  });
  const index = new Map(ir.rules.map((r, i) => [r.id, i]));
  const prepared = preparePolicy(ir);
  const validate = createSignalValidator(version.schema as object);
  const rules = ir.rules.map((r) => formulaOf(nowAsVariable(r.when), side, space));
  const constraints = new Map<number, Constraint>();
  return {
    outcomes,
    rules,
    decide(request) {
      const { [NOW_VARIABLE]: now, ...signals } = request;
      if (!validate(signals).valid) return -1;
      const d = prepared.evaluate(signals, typeof now === "string" ? new Date(now) : undefined);
      if (d.decided) return index.get(d.ruleId) ?? ir.rules.length;
      return d.fault ? faultOutcome.get(d.fault.ruleId)! : ir.rules.length;
    },
    decidedBy(i) {
      let c = constraints.get(i);
      if (!c) {
        // Rule r decides (or faults) where its condition is true (a fault) and no rule before it is true or faults.
        const r = faultRule.get(i) ?? i;
        const earlier = rules.slice(0, r).map((f) => constraint(f, F | U));
        c = all(r < rules.length ? [constraint(rules[r]!, faultRule.has(i) ? E : T), ...earlier] : earlier);
        constraints.set(i, c);
      }
      return c;
    },
  };
}

const DEFAULTS = { maxVisits: 20_000, maxBoxes: 64, triesPerBox: 400 };

function compare(
  space: SignalSpace,
  sides: Readonly<Record<Side, SideModel>>,
  i: number,
  j: number,
  options: DiffOptions,
): { witness: Witness } | { reasons: string[] } {
  const { maxVisits, maxBoxes, triesPerBox } = { ...DEFAULTS, ...options };
  const reasons = new Set<string>();
  const search = new Search(maxVisits);
  let boxes = 0;
  try {
    for (const region of search.regions(all([sides.old.decidedBy(i), sides.new.decidedBy(j)]), space.variables)) {
      // A box whose instants reach none of its week minutes is empty (calendar-link.ts).
      const box = linkBox(region, space.variables);
      if (box === null) continue;
      const found = witnessIn(box, space, sides, i, j, triesPerBox, (i * 7919 + j) >>> 0);
      if (found) return { witness: found };
      const terms = narrowedTerms(box, space.variables);
      if (box.opaque.size === 0 && terms.length === 0) {
        reasons.add(
          space.unmodelled.length > 0
            ? `the schema is not fully modelled: ${space.unmodelled.join("; ")}`
            : "internal: no request in a box the domains call non-empty decided as expected",
        );
      }
      for (const { atom } of box.opaque.values()) reasons.add(atom.reason);
      for (const v of terms) reasons.add(`\`${expressionText(v.term!)}\`: its value is rounded arithmetic on several signals`);
      if (++boxes >= maxBoxes) {
        reasons.add(`no witness in the first ${maxBoxes} boxes of the region`);
        break;
      }
    }
  } catch (e) {
    if (!(e instanceof SearchLimitError || e instanceof DomainLimitError)) throw e;
    reasons.add(e.message);
  }
  return { reasons: [...reasons] };
}

/** A request in `box` that the old version decides by `i` and the new by `j`, or null when none of those tried is. */
function witnessIn(
  box: Box,
  space: SignalSpace,
  sides: Readonly<Record<Side, SideModel>>,
  i: number,
  j: number,
  tries: number,
  seed: number,
): Witness | null {
  const options = candidates(box, space.variables, space.zoneChanges);
  const exact = box.opaque.size === 0 && narrowedTerms(box, space.variables).length === 0;
  const next = random(seed);
  const decides = (assignment: Assignment): boolean => {
    const requests = requestsOf(assignment, space.variables);
    return sides.old.decide(requests.old) === i && sides.new.decide(requests.new) === j;
  };
  for (let t = 0; t < tries; t++) {
    const assignment = new Map<string, State>();
    for (const [id, states] of options) assignment.set(id, t === 0 ? states[0]! : states[Math.floor(next() * states.length)]!);
    const linked = linkAssignment(box, assignment, space.variables);
    if (box.linear.length > 0) for (const [id, state] of linearPoint(linked, space.variables, t % 4 !== 3, next)) assignment.set(id, state);
    // Past the first quarter of the tries, which find readable witnesses where they are common, every other aims.
    if (t >= tries / 4 && t % 2 === 1) aimAtBoundary(assignment, box, space.variables, next);
    if (decides(assignment)) return witnessOf(requestsOf(simplify(assignment, box, space.variables, decides), space.variables));
    // Without opaque atoms and terms every point of the box is in the region: a miss means the schema was not fully modelled.
    if (exact && t >= Math.min(tries, 16)) break;
  }
  return null;
}

/** The variables for arithmetic terms (SignalSpace.termVariable) that the box narrows: those a witness must reach. */
function narrowedTerms(box: Box, variables: readonly Variable[]): Variable[] {
  return variables.filter((v) => v.term !== undefined && !within(v.universe, box.states.get(v.id)!));
}

/** One request for both versions when they were sent the same signals; otherwise each version's. Its instant apart. */
function witnessOf(requests: Record<Side, Record<string, Scalar>>): Witness {
  const { [NOW_VARIABLE]: now, ...signals } = requests.new;
  const { [NOW_VARIABLE]: _oldNow, ...oldSignals } = requests.old;
  const at = typeof now === "string" ? { now: decisionInstant(new Date(now)) } : {};
  const same = JSON.stringify(sortKeys(oldSignals)) === JSON.stringify(sortKeys(signals));
  return same ? { ...at, signals, validForBoth: true } : { ...at, signals, oldSignals, validForBoth: false };
}

function sortKeys(o: Record<string, Scalar>): Record<string, Scalar> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
}

function governsChange(versions: Readonly<Record<Side, PolicyVersion>>): GovernsChange | null {
  const [o, n] = [versions.old.ir.governs, versions.new.ir.governs];
  const same = o.action === n.action && o.binding.length === n.binding.length && o.binding.every((b) => n.binding.includes(b));
  return same ? null : { old: { action: o.action, binding: [...o.binding] }, new: { action: n.action, binding: [...n.binding] } };
}
