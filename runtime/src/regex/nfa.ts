/**
 * A pattern's Thompson NFA, built from regexpp's AST of it (`u` flag). Every construct a linear-time automaton can run
 * becomes states; the others (backreferences, lookarounds of more than one character, modifiers) are refused with the
 * construct named, and so is a pattern whose counted repetitions expand beyond MAX_NFA_STATES.
 */
import { RegExpParser } from "@eslint-community/regexpp";
import type { Alternative, Element, LookaroundAssertion, Node } from "@eslint-community/regexpp/ast";
import type { Atom } from "./alphabet.js";

export const MAX_NFA_STATES = 10_000;
/** Deeper nesting than this is refused rather than left to overflow the stack. */
const MAX_DEPTH = 200;

/** A state's kind. CHAR consumes one code point of atom `arg`, then goes to `out`. */
export const CHAR = 0;
/** Goes to both `out` and `out2`. */
export const SPLIT = 1;
/** Goes to `out` when assertion `arg` holds. */
export const ASSERT = 2;
export const MATCH = 3;

/** A zero-width test of the code points before and after the position (absent at the ends of the input). */
export type Assertion =
  | { readonly kind: "start" }
  | { readonly kind: "end" }
  | { readonly kind: "word"; readonly negate: boolean }
  /** Holds when the neighbour is in one of `atoms` (or `always`, for an empty alternative), inverted by `negate`. */
  | {
      readonly kind: "look";
      readonly behind: boolean;
      readonly negate: boolean;
      readonly atoms: readonly number[];
      readonly always: boolean;
    };

export interface Nfa {
  readonly kind: Uint8Array;
  readonly out: Int32Array;
  readonly out2: Int32Array;
  readonly arg: Int32Array;
  readonly start: number;
  readonly atoms: readonly Atom[];
  readonly assertions: readonly Assertion[];
  /** The atom of `\w`, when a word boundary needs it. */
  readonly wordAtom: number;
}

/** Why a pattern is refused: `construct` is its text in the pattern, `message` names it and says what to do. */
export class Refusal {
  constructor(
    readonly construct: string,
    readonly message: string,
  ) {}
}

const parser = new RegExpParser({ ecmaVersion: 2025 });

/** The pattern's NFA, or why it is refused. The pattern must already be valid for `new RegExp(pattern, "u")`. */
export function buildNfa(pattern: string): Nfa | Refusal {
  let ast;
  try {
    ast = parser.parsePattern(pattern, 0, pattern.length, { unicode: true });
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return new Refusal(pattern, `the pattern is not understood by writ's linear-time engine: ${why}`);
  }
  try {
    return new Builder().build(ast.alternatives);
  } catch (e) {
    if (e instanceof Refusal) return e;
    throw e;
  }
}

class Builder {
  private readonly kinds: number[] = [];
  private readonly outs: number[] = [];
  private readonly outs2: number[] = [];
  private readonly args: number[] = [];
  private readonly atoms: Atom[] = [];
  private readonly atomIds = new Map<string, number>();
  private readonly assertions: Assertion[] = [];
  private wordAtom = -1;
  /** The counted repetitions being expanded, outermost first: the first is named when the pattern grows too large. */
  private readonly counted: string[] = [];
  private depth = 0;

  build(alternatives: readonly Alternative[]): Nfa {
    const match = this.state(MATCH, -1, -1, -1);
    const start = this.alternatives(alternatives, match);
    return {
      kind: Uint8Array.from(this.kinds),
      out: Int32Array.from(this.outs),
      out2: Int32Array.from(this.outs2),
      arg: Int32Array.from(this.args),
      start,
      atoms: this.atoms,
      assertions: this.assertions,
      wordAtom: this.wordAtom,
    };
  }

  private state(kind: number, out: number, out2: number, arg: number): number {
    if (this.kinds.length >= MAX_NFA_STATES) {
      const what = this.counted[0] ?? "the pattern";
      throw new Refusal(
        what,
        `\`${what}\` expands to more than ${MAX_NFA_STATES} states, too large to match in linear time: use smaller counts, or bound the length with \`length\``,
      );
    }
    this.kinds.push(kind);
    this.outs.push(out);
    this.outs2.push(out2);
    this.args.push(arg);
    return this.kinds.length - 1;
  }

  private atom(atom: Atom): number {
    const key = atom.kind === "char" ? `c${atom.value}` : `s${atom.source}`;
    let id = this.atomIds.get(key);
    if (id === undefined) {
      id = this.atoms.push(atom) - 1;
      this.atomIds.set(key, id);
    }
    return id;
  }

  /** The entry of `a|b|...` followed by `next`. */
  private alternatives(alternatives: readonly Alternative[], next: number): number {
    let entry = this.sequence(alternatives[alternatives.length - 1]!.elements, next);
    for (let i = alternatives.length - 2; i >= 0; i--) {
      entry = this.state(SPLIT, this.sequence(alternatives[i]!.elements, next), entry, -1);
    }
    return entry;
  }

  private group(alternatives: readonly Alternative[], next: number): number {
    if (++this.depth > MAX_DEPTH) {
      throw new Refusal("(", `groups nested more than ${MAX_DEPTH} deep are not supported: flatten the pattern`);
    }
    const entry = this.alternatives(alternatives, next);
    this.depth--;
    return entry;
  }

  private sequence(elements: readonly Element[], next: number): number {
    let entry = next;
    for (let i = elements.length - 1; i >= 0; i--) entry = this.element(elements[i]!, entry);
    return entry;
  }

  private element(e: Element, next: number): number {
    switch (e.type) {
      case "Character":
        return this.state(CHAR, next, -1, this.atom({ kind: "char", value: e.value }));
      case "CharacterSet":
      case "CharacterClass":
        return this.state(CHAR, next, -1, this.atom({ kind: "set", source: e.raw }));
      case "Group":
        if (e.modifiers !== null) {
          const opening = e.raw.slice(0, e.raw.indexOf(":") + 1);
          throw new Refusal(opening, `modifiers \`${opening}\` are not supported: write each case out, such as \`[aA]\``);
        }
        return this.group(e.alternatives, next);
      case "CapturingGroup":
        return this.group(e.alternatives, next);
      case "Quantifier":
        return this.quantifier(e.element, e.min, e.max, e.raw, next);
      case "Backreference":
        throw new Refusal(e.raw, `backreference \`${e.raw}\` cannot be matched in linear time: repeat the group's pattern instead`);
      case "Assertion":
        return this.state(ASSERT, next, -1, this.assertions.push(this.assertion(e)) - 1);
      default:
        // Set expressions (`[a&&b]`) exist with the `v` flag only.
        throw new Refusal(e.raw, `\`${e.raw}\` is not supported`);
    }
  }

  private quantifier(element: Element, min: number, max: number, raw: string, next: number): number {
    const counted = max !== Infinity ? max > 1 : min > 1;
    if (counted) this.counted.push(raw);
    let entry = next;
    if (max === Infinity) {
      const loop = this.state(SPLIT, -1, next, -1);
      this.outs[loop] = this.element(element, loop);
      entry = loop;
    } else {
      for (let i = min; i < max; i++) entry = this.state(SPLIT, this.element(element, entry), next, -1);
    }
    for (let i = 0; i < min; i++) entry = this.element(element, entry);
    if (counted) this.counted.pop();
    return entry;
  }

  private assertion(e: Extract<Element, { type: "Assertion" }>): Assertion {
    switch (e.kind) {
      case "start":
      case "end":
        return { kind: e.kind };
      case "word":
        if (this.wordAtom < 0) this.wordAtom = this.atom({ kind: "set", source: "\\w" });
        return { kind: "word", negate: e.negate };
      default:
        return this.lookaround(e);
    }
  }

  /** A lookaround whose every alternative is one character or class (or empty), possibly in groups. */
  private lookaround(e: LookaroundAssertion): Assertion {
    const atoms: number[] = [];
    let always = false;
    const collect = (alternatives: readonly Alternative[]): boolean =>
      alternatives.every(({ elements }) => {
        if (elements.length === 0) return (always = true);
        if (elements.length !== 1) return false;
        const only: Node = elements[0]!;
        switch (only.type) {
          case "Character":
            atoms.push(this.atom({ kind: "char", value: only.value }));
            return true;
          case "CharacterSet":
          case "CharacterClass":
            atoms.push(this.atom({ kind: "set", source: only.raw }));
            return true;
          case "CapturingGroup":
            return collect(only.alternatives);
          case "Group":
            return only.modifiers === null && collect(only.alternatives);
          default:
            return false;
        }
      });
    if (!collect(e.alternatives)) {
      const what = e.kind === "lookahead" ? "lookahead" : "lookbehind";
      const example = e.kind === "lookahead" ? "(?=[a-z])" : "(?<=[a-z])";
      throw new Refusal(
        e.raw,
        `${what} \`${e.raw}\` cannot be matched in linear time: a ${what} may test one character or class only, such as \`${example}\`; test for more with a second \`matches\``,
      );
    }
    return { kind: "look", behind: e.kind === "lookbehind", negate: e.negate, atoms, always };
  }
}
