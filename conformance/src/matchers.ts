/**
 * The matchers of `expect.body` and `expect.headers` (docs/conformance.md, "Matchers"): a scalar matches an equal
 * scalar, an array an array of the same length element by element, an object an object having every listed member
 * (extra members allowed); an object whose keys start with `$` is an operator. Every mismatch is a message naming
 * the JSON pointer where it is, so a failing case says exactly what the server got wrong.
 */
import { appendPointer } from "./json-pointer.js";
import { parseStrictJson, StrictJsonError } from "./strict-json.js";

export const OPERATORS = [
  "$type",
  "$regex",
  "$absent",
  "$exact",
  "$oneOf",
  "$each",
  "$length",
  "$minLength",
  "$maxLength",
  "$gte",
  "$lte",
  "$captured",
  "$isoTime",
  "$json",
  "$not",
] as const;
export type Operator = (typeof OPERATORS)[number];

export const TYPE_NAMES = ["string", "number", "integer", "boolean", "object", "array", "null"] as const;

/**
 * What a matcher may look up: captures of earlier steps and the case's generated UUIDs (`uuid:NAME`), and when the
 * step's request was sent (what `{"$isoTime": {"withinSeconds": N}}` measures from).
 */
export interface MatchContext {
  lookup(name: string): { found: true; value: unknown } | { found: false };
  /** When the request of the answer being matched was sent; absent where no request was (counts, unit tests). */
  readonly sentAt?: Date;
}

export interface Mismatch {
  /** JSON pointer into the value matched ("" is the value itself). */
  readonly at: string;
  readonly message: string;
}

const MAX_SHOWN = 120;

/** A value as a message shows it: JSON, cut short. */
export function show(value: unknown): string {
  const text = value === undefined ? "nothing" : JSON.stringify(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 1)}…` : text;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An object every key of which starts with `$`: an operator, not an object to match member by member. */
export function isOperator(value: unknown): value is Partial<Record<Operator, unknown>> {
  return isPlainObject(value) && Object.keys(value).length > 0 && Object.keys(value).every((k) => k.startsWith("$"));
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function hasType(value: unknown, type: string): boolean {
  if (type === "number") return typeof value === "number";
  if (type === "integer") return typeof value === "number" && Number.isInteger(value);
  return typeOf(value) === type;
}

/** Deep equality of JSON values (object member order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** An ISO 8601 date-time (date, `T`, time; fraction and zone optional) that names a real instant. */
export function isIsoTime(value: unknown): boolean {
  if (typeof value !== "string" || !ISO_TIME.test(value)) return false;
  const [date] = value.split("T") as [string];
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d && !Number.isNaN(Date.parse(value));
}

/** The argument of `{"$isoTime": {"withinSeconds": N}}`, or null for `true`/`false`. */
function withinSeconds(argument: unknown): number | null {
  return isPlainObject(argument) && typeof argument["withinSeconds"] === "number" ? argument["withinSeconds"] : null;
}

function isoTimeProblem(argument: unknown, actual: unknown, ctx: MatchContext): string | null {
  const seconds = withinSeconds(argument);
  if (seconds === null)
    return isIsoTime(actual) === (argument === true)
      ? null
      : `expected ${argument === true ? "" : "no "}ISO 8601 date-time, got ${show(actual)}`;
  const wanted = `an ISO 8601 date-time within ${seconds} s of when the request was sent`;
  if (ctx.sentAt === undefined) return `expected ${wanted}, but no request was sent here`;
  const sent = ctx.sentAt.toISOString();
  if (!isIsoTime(actual)) return `expected ${wanted} (${sent}), got ${show(actual)}`;
  const off = (Date.parse(actual as string) - ctx.sentAt.getTime()) / 1000;
  return Math.abs(off) <= seconds
    ? null
    : `expected ${wanted} (${sent}), got ${show(actual)}, ${Math.abs(off).toFixed(3)} s ${off < 0 ? "before" : "after"} it`;
}

/**
 * Whether `expected` holds where there is nothing: a member that does not exist (or no body at all). Only absence
 * does: `{"$absent": true}`, a `$not` of what does not hold there, a `$oneOf` with an option that does; every other
 * matcher needs a value.
 */
export function holdsWhenMissing(expected: unknown): boolean {
  if (!isOperator(expected)) return false;
  return Object.entries(expected).every(([op, argument]) => {
    if (op === "$absent") return argument === true;
    if (op === "$not") return !holdsWhenMissing(argument);
    if (op === "$oneOf") return Array.isArray(argument) && argument.some(holdsWhenMissing);
    return false;
  });
}

function operator(op: Operator, argument: unknown, actual: unknown, at: string, ctx: MatchContext): Mismatch[] {
  const fail = (message: string): Mismatch[] => [{ at, message }];
  switch (op) {
    case "$type":
      return hasType(actual, argument as string)
        ? []
        : fail(`expected ${argument as string}, got ${actual === undefined ? "nothing" : `${typeOf(actual)} ${show(actual)}`}`);
    case "$regex":
      if (typeof actual !== "string") return fail(`expected a string matching /${argument as string}/, got ${show(actual)}`);
      return new RegExp(argument as string, "u").test(actual)
        ? []
        : fail(`expected a string matching /${argument as string}/, got ${show(actual)}`);
    case "$absent":
      // As a member value the absence is checked by the object matcher; reached here, the member exists.
      return argument === true ? fail(`expected no such member, got ${show(actual)}`) : [];
    case "$exact":
      return deepEqual(argument, actual) ? [] : fail(`expected exactly ${show(argument)}, got ${show(actual)}`);
    case "$oneOf": {
      const options = argument as unknown[];
      return options.some((m) => match(m, actual, at, ctx).length === 0)
        ? []
        : fail(`expected one of ${show(options)}, got ${show(actual)}`);
    }
    case "$each":
      if (!Array.isArray(actual)) return fail(`expected an array, got ${show(actual)}`);
      return actual.flatMap((element, i) => match(argument, element, appendPointer(at, i), ctx));
    case "$length":
    case "$minLength":
    case "$maxLength": {
      if (typeof actual !== "string" && !Array.isArray(actual)) return fail(`expected an array or string, got ${show(actual)}`);
      const n = argument as number;
      const ok = op === "$length" ? actual.length === n : op === "$minLength" ? actual.length >= n : actual.length <= n;
      const wanted = op === "$length" ? `length ${n}` : op === "$minLength" ? `length at least ${n}` : `length at most ${n}`;
      return ok ? [] : fail(`expected ${wanted}, got length ${actual.length}`);
    }
    case "$gte":
    case "$lte": {
      const n = argument as number;
      if (typeof actual !== "number") return fail(`expected a number ${op === "$gte" ? ">=" : "<="} ${n}, got ${show(actual)}`);
      return (op === "$gte" ? actual >= n : actual <= n)
        ? []
        : fail(`expected a number ${op === "$gte" ? ">=" : "<="} ${n}, got ${actual}`);
    }
    case "$captured": {
      const captured = ctx.lookup(argument as string);
      if (!captured.found) return fail(`nothing was captured as \`${argument as string}\``);
      return deepEqual(captured.value, actual)
        ? []
        : fail(`expected ${show(captured.value)} (captured \`${argument as string}\`), got ${show(actual)}`);
    }
    case "$isoTime": {
      const problem = isoTimeProblem(argument, actual, ctx);
      return problem === null ? [] : fail(problem);
    }
    case "$not": {
      // Nothing there (a missing member, no body) does not match M, unless M is about absence.
      const holds = actual === undefined ? holdsWhenMissing(argument) : match(argument, actual, at, ctx).length === 0;
      return holds ? fail(`expected anything but ${describe(argument)}, got ${show(actual)}`) : [];
    }
    case "$json": {
      if (typeof actual !== "string") return fail(`expected a string of JSON, got ${show(actual)}`);
      let parsed: unknown;
      try {
        parsed = parseStrictJson(actual);
      } catch (e) {
        return fail(`expected a string of strict JSON: ${e instanceof StrictJsonError ? e.message : String(e)}`);
      }
      return match(argument, parsed, `${at}(json)`, ctx);
    }
  }
}

/**
 * Every way `actual` fails `expected`, each at its JSON pointer (below `at`). Operator arguments are trusted to be
 * well formed: the case loader checks them (`checkMatcher`).
 */
export function match(expected: unknown, actual: unknown, at: string, ctx: MatchContext): Mismatch[] {
  if (isOperator(expected)) {
    return Object.entries(expected).flatMap(([op, argument]) => operator(op as Operator, argument, actual, at, ctx));
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [{ at, message: `expected an array, got ${show(actual)}` }];
    if (actual.length !== expected.length)
      return [{ at, message: `expected an array of length ${expected.length}, got length ${actual.length}: ${show(actual)}` }];
    return expected.flatMap((m, i) => match(m, actual[i], appendPointer(at, i), ctx));
  }
  if (isPlainObject(expected)) {
    if (!isPlainObject(actual)) return [{ at, message: `expected an object, got ${show(actual)}` }];
    return Object.entries(expected).flatMap(([key, m]) => {
      const member = appendPointer(at, key);
      const present = Object.hasOwn(actual, key);
      if (isOperator(m) && m.$absent === true)
        return present ? [{ at: member, message: `expected no such member, got ${show(actual[key])}` }] : [];
      // A missing member matches only matchers of absence (`$absent`, a `$not` of something it does not match).
      if (!present) return holdsWhenMissing(m) ? [] : [{ at: member, message: `missing, expected ${describe(m)}` }];
      return match(m, actual[key], member, ctx);
    });
  }
  return Object.is(expected, actual) || expected === actual ? [] : [{ at, message: `expected ${show(expected)}, got ${show(actual)}` }];
}

/** A short description of what a matcher wants, for "missing" messages. */
function describe(expected: unknown): string {
  if (!isOperator(expected)) return show(expected);
  return Object.entries(expected)
    .map(([op, argument]) =>
      op === "$type" ? String(argument) : op === "$not" ? `$not (${describe(argument)})` : `${op} ${show(argument)}`,
    )
    .join(", ");
}

/**
 * The problems of a matcher as written in a case file (unknown operators, arguments of the wrong kind, bad
 * regular expressions), each at its JSON pointer in the file, so a typo is a load error and never a case that
 * silently checks something else.
 */
export function checkMatcher(expected: unknown, at: string): Mismatch[] {
  if (Array.isArray(expected)) return expected.flatMap((m, i) => checkMatcher(m, appendPointer(at, i)));
  if (!isPlainObject(expected)) return [];
  const keys = Object.keys(expected);
  const dollar = keys.filter((k) => k.startsWith("$"));
  if (dollar.length === 0) return keys.flatMap((k) => checkMatcher(expected[k], appendPointer(at, k)));
  if (dollar.length !== keys.length)
    return [{ at, message: `mixes operators (${dollar.join(", ")}) with members; put the operators in the member they check` }];
  return keys.flatMap((op) => {
    const argument = expected[op];
    const here = appendPointer(at, op);
    const bad = (message: string): Mismatch[] => [{ at: here, message }];
    switch (op as Operator) {
      case "$type":
        return (TYPE_NAMES as readonly unknown[]).includes(argument) ? [] : bad(`must be one of ${TYPE_NAMES.join(", ")}`);
      case "$regex":
        if (typeof argument !== "string") return bad("must be a string");
        try {
          new RegExp(argument, "u");
          return [];
        } catch (e) {
          return bad(`is not a valid regular expression: ${(e as Error).message}`);
        }
      case "$absent":
        return typeof argument === "boolean" ? [] : bad("must be true or false");
      case "$isoTime": {
        if (typeof argument === "boolean") return [];
        const n = isPlainObject(argument) && Object.keys(argument).length === 1 ? argument["withinSeconds"] : undefined;
        return typeof n === "number" && Number.isFinite(n) && n >= 0
          ? []
          : bad('must be true, false or {"withinSeconds": N} with a number N >= 0');
      }
      case "$not":
        return checkMatcher(argument, here);
      case "$exact":
        return [];
      case "$oneOf":
        return Array.isArray(argument) && argument.length > 0
          ? argument.flatMap((m, i) => checkMatcher(m, appendPointer(here, i)))
          : bad("must be a non-empty array of matchers");
      case "$each":
      case "$json":
        return checkMatcher(argument, here);
      case "$length":
      case "$minLength":
      case "$maxLength":
        return Number.isInteger(argument) && (argument as number) >= 0 ? [] : bad("must be an integer >= 0");
      case "$gte":
      case "$lte":
        return typeof argument === "number" ? [] : bad("must be a number");
      case "$captured":
        if (typeof argument !== "string" || argument === "") return bad("must name a capture");
        // A generated UUID is named by its template's name alone, whatever its version, variant and case.
        return !argument.startsWith("uuid:") || /^uuid:[A-Za-z0-9_.-]+$/.test(argument)
          ? []
          : bad(`\`${argument}\`: a generated UUID is named \`uuid:NAME\`, without a version, variant or case suffix`);
      default:
        return bad(`is not an operator; known: ${OPERATORS.join(", ")}`);
    }
  });
}
