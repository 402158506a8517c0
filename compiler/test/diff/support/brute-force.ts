/**
 * The reference `writ diff` is checked against: both versions evaluated on a finite set of requests. The set is the
 * boundary grid of the signal space: for each signal, every constant a condition compares it with and the values just
 * beside it (the next double, the next whole number, the next millisecond), every bound of either schema, every enum
 * value, both booleans, absence, and for a string a valid value equal to no constant; every combination of those. When
 * each condition compares one signal with constants, each region of the space holds a point of this grid, so the grid
 * finds every pair of outcomes `writ diff` can report. Extra requests (generated signal sets) are added to it.
 */
import fc from "fast-check";
import { createSignalValidator, preparePolicy, type IrExpr, type PolicyIr, type Scalar } from "@writ/runtime";
import { compile } from "../../../src/compile.js";
import { nextDown, nextUp } from "../../../src/analysis/number-set.js";
import type { SignalsSchema } from "../../../src/diff/signal-domain.js";
import { irNodes } from "../../../src/diff/ir-operands.js";
import { random } from "../../../src/diff/witness.js";
import type { PolicyAst } from "../../../src/syntax/ast.js";
import { signalsArb } from "../../support/generate-signals.js";

export interface Version {
  readonly ir: PolicyIr;
  readonly schema: SignalsSchema;
  readonly ast: PolicyAst;
  /**
   * The deciding rule (`otherwise` when none) with its verdict and reason, the rule whose condition faulted with
   * verdict `fault`, or null when the schema refuses the request.
   */
  decide(request: Record<string, unknown>): string | null;
}

export function compileVersion(source: string): Version | null {
  const r = compile("policy.writ", source);
  if (!r.valid || !r.ir || !r.bundle || !r.ast) return null;
  const schema = JSON.parse(new TextDecoder().decode(r.bundle.files.get("signals.schema.json")!)) as SignalsSchema;
  const validate = createSignalValidator(schema as object);
  const prepared = preparePolicy(r.ir);
  return {
    ir: r.ir,
    schema,
    ast: r.ast,
    decide(request) {
      if (!validate(request).valid) return null;
      const d = prepared.evaluate(request);
      if (d.decided) return JSON.stringify([d.ruleId, d.verdict, d.reason]);
      return JSON.stringify(d.fault ? [d.fault.ruleId, "fault", null] : ["otherwise", "undecided", null]);
    },
  };
}

const ABSENT = Symbol("absent");
type State = Scalar | typeof ABSENT;

export interface BruteForce {
  /** The pairs (old rule, new rule) of the requests decided differently, each with one such request. */
  readonly pairs: ReadonlyMap<string, Record<string, unknown>>;
  readonly requests: number;
  /** Whether the whole grid was evaluated (it was small enough) and every string signal had a value beside its constants. */
  readonly complete: boolean;
}

/** An outcome as a pair names it: its rule, marked when the rule faulted. */
export interface Decided {
  readonly rule: string;
  readonly verdict: string;
}

export function pairKey(old: Decided, next: Decided): string {
  const name = (o: Decided) => (o.verdict === "fault" ? `${o.rule} (fault)` : o.rule);
  return `${name(old)} -> ${name(next)}`;
}

export interface BruteForceOptions {
  readonly maxGrid: number;
  /** Generated requests added to the grid, per version (0 for policies the generator does not know). */
  readonly samples: number;
  readonly seed: number;
  /** Values for string signals, in place of generated ones: for policies whose patterns the generator does not know. */
  readonly strings?: Readonly<Record<string, readonly string[]>>;
}

export function bruteForce(old: Version, next: Version, options: BruteForceOptions): BruteForce {
  const names = [...new Set([...Object.keys(old.ir.signals), ...Object.keys(next.ir.signals)])];
  let complete = true;
  const axes = names.map((name) => {
    const axis = gridOf(name, old, next, options.strings?.[name]);
    complete &&= axis.complete;
    return axis.states;
  });
  const size = axes.reduce((n, a) => n * a.length, 1);
  const points: State[][] = [];
  if (size <= options.maxGrid) points.push(...product(axes));
  else {
    complete = false;
    const next01 = random(options.seed);
    for (let i = 0; i < options.maxGrid; i++) points.push(axes.map((a) => a[Math.floor(next01() * a.length)]!));
  }
  const requests: Record<string, unknown>[] = points.map((p) =>
    Object.fromEntries(names.flatMap((n, i) => (p[i] === ABSENT ? [] : [[n, p[i]]]))),
  );
  if (options.samples > 0)
    for (const ast of [old.ast, next.ast]) requests.push(...fc.sample(signalsArb(ast), { numRuns: options.samples, seed: options.seed }));
  const pairs = new Map<string, Record<string, unknown>>();
  for (const request of requests) {
    const a = old.decide(only(request, old.ir));
    const b = next.decide(only(request, next.ir));
    if (a === null || b === null || a === b) continue;
    const decided = (d: string): Decided => {
      const [rule, verdict] = JSON.parse(d) as [string, string];
      return { rule, verdict };
    };
    const key = pairKey(decided(a), decided(b));
    if (!pairs.has(key)) pairs.set(key, request);
  }
  return { pairs, requests: requests.length, complete };
}

/** The members of `request` that `ir` declares. */
export function only(request: Record<string, unknown>, ir: PolicyIr): Record<string, unknown> {
  return Object.fromEntries(Object.entries(request).filter(([k]) => Object.hasOwn(ir.signals, k)));
}

function gridOf(name: string, old: Version, next: Version, strings?: readonly string[]): { states: State[]; complete: boolean } {
  const sides = [old, next].filter((v) => Object.hasOwn(v.ir.signals, name));
  const states = new Set<State>();
  if (sides.some((v) => !v.schema.required.includes(name))) states.add(ABSENT);
  const types = new Set(sides.map((v) => v.ir.signals[name]!.type));
  const constants = sides.flatMap((v) => v.ir.rules.flatMap((r) => constantsBeside(name, r.when)));
  let complete = true;
  for (const type of types) {
    switch (type) {
      case "boolean":
        states.add(true).add(false);
        break;
      case "enum":
        for (const v of sides) (v.schema.properties[name]!.enum ?? []).forEach((x) => states.add(x));
        break;
      case "number":
      case "integer": {
        const bounds = sides.flatMap((v) => {
          const p = v.schema.properties[name]!;
          return [p.minimum, p.maximum, p.exclusiveMinimum, p.exclusiveMaximum].filter((x): x is number => x !== undefined);
        });
        const edges = [
          ...constants.filter((c): c is number => typeof c === "number"),
          ...bounds,
          -Number.MAX_SAFE_INTEGER,
          Number.MAX_SAFE_INTEGER,
          0,
        ];
        for (const e of edges) {
          for (const x of [e, nextUp(e), nextDown(e), Math.floor(e), Math.ceil(e), Math.floor(e) + 1, Math.ceil(e) - 1]) {
            if (Number.isFinite(x) && Math.abs(x) <= Number.MAX_SAFE_INTEGER) states.add(x === 0 ? 0 : x);
          }
        }
        break;
      }
      case "timestamp": {
        const instants = constants
          .filter((c): c is string => typeof c === "string")
          .map((c) => Date.parse(c))
          .filter((ms) => !Number.isNaN(ms));
        for (const ms of [...instants, Date.parse("0000-01-01T00:00:00Z"), Date.parse("9999-12-31T23:59:59.999Z")]) {
          for (const x of [ms - 1, ms, ms + 1])
            if (x >= Date.parse("0000-01-01T00:00:00Z") && x <= Date.parse("9999-12-31T23:59:59.999Z"))
              states.add(new Date(x).toISOString());
        }
        break;
      }
      case "string": {
        const literals = constants.filter((c): c is string => typeof c === "string");
        literals.forEach((l) => states.add(l));
        if (strings !== undefined) {
          strings.filter((g) => sides.every((v) => valid(v, name, g))).forEach((g) => states.add(g));
          break;
        }
        // A valid value equal to no constant stands for all the others.
        const generated = sides.flatMap((v) =>
          fc.sample(
            signalsArb(v.ast).map((s) => s[name]),
            { numRuns: 30, seed: 7 },
          ),
        );
        const beside = generated.find(
          (g): g is string => typeof g === "string" && !literals.includes(g) && sides.every((v) => valid(v, name, g)),
        );
        if (beside === undefined) complete = false;
        else states.add(beside);
        break;
      }
    }
  }
  return { states: [...states], complete };
}

function valid(v: Version, name: string, value: string): boolean {
  const p = v.schema.properties[name]!;
  const n = [...value].length;
  return (p.pattern === undefined || new RegExp(p.pattern, "u").test(value)) && n >= (p.minLength ?? 0) && n <= (p.maxLength ?? Infinity);
}

/** The constants a condition compares signal `name` with, directly (`name op c`, `name in [...]`, `name in a..b`). */
function constantsBeside(name: string, e: IrExpr): Scalar[] {
  const isSignal = (x: IrExpr) => x.op === "signal" && x.name === name;
  const literal = (x: IrExpr): Scalar[] => (x.op === "lit" ? [x.value] : []);
  return irNodes(e).flatMap((x) => {
    if (x.op === "cmp" || x.op === "str" || x.op === "arith")
      return [...(isSignal(x.left) ? literal(x.right) : []), ...(isSignal(x.right) ? literal(x.left) : [])];
    if (x.op === "in" && isSignal(x.value)) return [...x.set];
    if (x.op === "range" && isSignal(x.value)) return [...literal(x.min), ...literal(x.max)];
    return [];
  });
}

function* product(axes: readonly State[][]): Generator<State[]> {
  if (axes.length === 0) {
    yield [];
    return;
  }
  const [first, ...rest] = axes;
  for (const tail of product(rest)) for (const s of first!) yield [s, ...tail];
}
