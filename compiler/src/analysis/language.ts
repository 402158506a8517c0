import { RegExpParser, visitRegExpAST } from "@eslint-community/regexpp";
import type { Alternative } from "@eslint-community/regexpp/ast";
import { CharSet, DFA, JS, NFA, TooManyNodesError } from "refa";

/**
 * Regular languages of strings, for the string domain of `writ diff`: a minimal DFA over Unicode code points (refa),
 * which makes intersection, complement and emptiness exact. Strings are sequences of code points, as JavaScript's
 * `u`-flag regular expressions, `len` and JSON Schema's lengths see them.
 */
export const MAX_CHAR = 0x10ffff;
const OPTIONS = { maxCharacter: MAX_CHAR } as const;
/** States one automaton may have; beyond it an operation gives up rather than exhaust memory. */
const MAX_STATES = 20_000;

/** An automaton outgrew MAX_STATES, or a search its bound: the question is left undecided, never guessed. */
export class DomainLimitError extends Error {}

function limited<T>(build: () => T): T {
  try {
    return build();
  } catch (e) {
    if (e instanceof TooManyNodesError) throw new DomainLimitError(`an automaton would need more than ${MAX_STATES} states`);
    throw e;
  }
}

const nfaFactory = (): NFA.LimitedNodeFactory => new NFA.LimitedNodeFactory(MAX_STATES);
const dfaFactory = (): DFA.LimitedNodeFactory => new DFA.LimitedNodeFactory(MAX_STATES);

export function codePoints(s: string): number[] {
  return [...s].map((c) => c.codePointAt(0)!);
}

let nextId = 0;

export class Language {
  readonly id = nextId++;
  private complemented: Language | undefined;
  private readonly intersections = new Map<number, Language>();

  private constructor(readonly dfa: DFA) {}

  private static of(fa: NFA | DFA): Language {
    return limited(() => {
      const dfa = fa instanceof DFA ? fa : DFA.fromFA(fa, dfaFactory());
      dfa.minimize();
      return new Language(dfa);
    });
  }

  /** Every sequence of code points. */
  static readonly ALL = Language.of(DFA.all(OPTIONS));

  /** Strings JSON can carry: no surrogate code point (the strict parser refuses a lone surrogate). */
  static readonly JSON_STRINGS = Language.of(
    (() => {
      const nfa = NFA.fromCharSet(CharSet.all(MAX_CHAR).without({ min: 0xd800, max: 0xdfff }));
      nfa.quantify(0, Infinity);
      return nfa;
    })(),
  );

  static words(words: readonly string[]): Language {
    return Language.of(NFA.fromWords(words.map(codePoints), OPTIONS, nfaFactory()));
  }

  /** Strings that start with `w`, end with it, or contain it. */
  static around(w: string, where: "prefix" | "suffix" | "infix"): Language {
    return limited(() => {
      const nfa = NFA.fromWords([codePoints(w)], OPTIONS, nfaFactory());
      if (where !== "prefix") nfa.prepend(NFA.all(OPTIONS));
      if (where !== "suffix") nfa.append(NFA.all(OPTIONS));
      return Language.of(nfa);
    });
  }

  /** The strings `w` starts with, ends with, or contains (finite). */
  static partsOf(w: string, which: "prefixes" | "suffixes" | "infixes"): Language {
    return limited(() => {
      const nfa = NFA.fromWords([codePoints(w)], OPTIONS, nfaFactory());
      if (which !== "suffixes") nfa.prefixes();
      if (which !== "prefixes") nfa.suffixes();
      return Language.of(nfa);
    });
  }

  /**
   * The strings in which `pattern` (JavaScript, `u` flag) finds a match, as `matches` and a schema's `pattern` test
   * them; or, when the pattern is not a regular language this models, why. Modelled: everything refa turns into an
   * automaton (classes, `\p{...}`, groups, alternation, quantifiers, backreferences it can resolve), with `^` only
   * at the start and `$` only at the end of a top-level alternative. Not modelled: other assertions (`\b`, `\B`,
   * lookarounds, `^` or `$` inside a group) and backreferences refa cannot resolve.
   */
  static search(pattern: string): Language | { readonly unsupported: string } {
    let ast;
    try {
      ast = new RegExpParser({ ecmaVersion: 2025 }).parsePattern(pattern, 0, pattern.length, { unicode: true });
    } catch {
      return { unsupported: "the pattern does not parse" };
    }
    let union: NFA | null = null;
    for (const alternative of ast.alternatives) {
      const part = searchAlternative(pattern, alternative);
      if ("unsupported" in part) return part;
      if (union === null) union = part;
      else union.union(part, nfaFactory());
    }
    return union === null ? Language.ALL : limitedOr(() => Language.of(union));
  }

  isEmpty(): boolean {
    return this.dfa.isEmpty;
  }

  has(s: string): boolean {
    return this.dfa.test(codePoints(s));
  }

  intersect(other: Language): Language {
    if (other === this || other === Language.ALL) return this;
    if (this === Language.ALL) return other;
    const cached = this.intersections.get(other.id);
    if (cached) return cached;
    const result = limited(() => {
      const dfa = DFA.fromIntersection(this.dfa, other.dfa, dfaFactory());
      dfa.minimize();
      return new Language(dfa);
    });
    this.intersections.set(other.id, result);
    other.intersections.set(this.id, result);
    return result;
  }

  complement(): Language {
    if (!this.complemented) {
      const dfa = this.dfa.copy(dfaFactory());
      dfa.complement(dfaFactory());
      dfa.minimize();
      this.complemented = new Language(dfa);
      this.complemented.complemented = this;
    }
    return this.complemented;
  }
}

function limitedOr(build: () => Language): Language | { readonly unsupported: string } {
  try {
    return build();
  } catch (e) {
    if (e instanceof DomainLimitError) return { unsupported: e.message };
    throw e;
  }
}

/** One top-level alternative, searched for anywhere unless anchored by a leading `^` or trailing `$`. */
function searchAlternative(pattern: string, alternative: Alternative): NFA | { readonly unsupported: string } {
  const elements = [...alternative.elements];
  const first = elements[0];
  const last = elements[elements.length - 1];
  const anchoredStart = first?.type === "Assertion" && first.kind === "start";
  if (anchoredStart) elements.shift();
  const anchoredEnd = elements.length > 0 && last?.type === "Assertion" && last.kind === "end";
  if (anchoredEnd) elements.pop();
  let assertion: string | null = null;
  for (const e of elements) {
    visitRegExpAST(e, {
      onAssertionEnter(a) {
        assertion ??= a.raw;
      },
    });
  }
  if (assertion !== null) return { unsupported: `the assertion \`${assertion}\` is not modelled` };
  const source = elements.length === 0 ? "" : pattern.slice(elements[0]!.start, elements[elements.length - 1]!.end);
  try {
    const { expression, maxCharacter } = JS.Parser.fromLiteral({ source, flags: "u" }).parse();
    const nfa = NFA.fromRegex(expression, { maxCharacter }, {}, nfaFactory());
    if (!anchoredStart) nfa.prepend(NFA.all(OPTIONS), nfaFactory());
    if (!anchoredEnd) nfa.append(NFA.all(OPTIONS), nfaFactory());
    return nfa;
  } catch (e) {
    if (e instanceof TooManyNodesError) return { unsupported: `an automaton would need more than ${MAX_STATES} states` };
    if (e instanceof Error && /backreference/i.test(e.message)) return { unsupported: "a backreference is not modelled" };
    return { unsupported: "the pattern is not a regular language refa models" };
  }
}
