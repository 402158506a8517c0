/**
 * writ's regular expressions: JavaScript's `u`-flag dialect, the one JSON Schema's `pattern` means, matched in time
 * linear in the input (a lazily built DFA, dfa.ts) instead of by V8's backtracking, which some patterns make
 * exponential. A pattern this engine cannot run in linear time is refused with the construct named (E310 in the
 * compiler, a refused bundle in the runtime); every other pattern answers `test` exactly as `new RegExp(p, "u")`.
 */
import { PatternRefusedError } from "../errors.js";
import { LazyDfa, type MatcherWork } from "./dfa.js";
import { buildNfa, Refusal, type Nfa } from "./nfa.js";

export { MAX_NFA_STATES } from "./nfa.js";
export type { MatcherWork } from "./dfa.js";

/** A compiled pattern; `test` is RegExp.prototype.test's answer (found anywhere in the string). */
export class LinearRegExp {
  private readonly dfa: LazyDfa;

  /** @internal use compileLinearRegExp */
  constructor(
    readonly source: string,
    nfa: Nfa,
  ) {
    this.dfa = new LazyDfa(nfa);
  }

  test(input: string): boolean {
    return this.dfa.test(input);
  }

  /** What the matcher has done so far (NFA states visited, DFA states built): linear in what it was given. */
  get work(): MatcherWork {
    return this.dfa.counted;
  }

  /** As a RegExp prints; ajv keys its compiled patterns by it. */
  toString(): string {
    return `/${this.source}/u`;
  }
}

/** Why the engine refuses a pattern valid for `new RegExp(pattern, "u")`, or null when it runs it. */
export function linearPatternRefusal(pattern: string): { readonly construct: string; readonly message: string } | null {
  const built = buildNfa(pattern);
  return built instanceof Refusal ? { construct: built.construct, message: built.message } : null;
}

/**
 * @throws SyntaxError when `new RegExp(pattern, "u")` does; PatternRefusedError when the engine refuses the pattern
 */
export function compileLinearRegExp(pattern: string): LinearRegExp {
  new RegExp(pattern, "u");
  const built = buildNfa(pattern);
  if (built instanceof Refusal) throw new PatternRefusedError(pattern, built.construct, built.message);
  return new LinearRegExp(pattern, built);
}

/** ajv's `code.regExp` option: every `pattern` (and `patternProperties`) of a schema compiled with this engine. */
export const linearRegExpEngine = Object.assign(
  (pattern: string, flags: string): LinearRegExp => {
    if (flags !== "u") throw new Error(`regular expression flags \`${flags}\` are not supported: writ patterns use \`u\` alone`);
    return compileLinearRegExp(pattern);
  },
  // The code ajv writes for it in standalone validation code, which writ does not generate: if some tool ever did,
  // its patterns throw rather than run unchecked, and no package imports another writ package by name.
  { code: '(() => { throw new Error("writ\'s linear regex engine is not available to standalone ajv code"); })' },
);
