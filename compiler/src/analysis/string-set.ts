import type { DFA } from "refa";
import { DomainLimitError, Language } from "./language.js";
import { NumberSet } from "./number-set.js";

/** Longest witness string built, in code points: past it the string domain gives up (DomainLimitError). */
const MAX_WITNESS_LENGTH = 100_000;

/** Code points preferred in witnesses, so they read well: lowercase, uppercase, digits, printable ASCII, then the rest. */
const PREFERRED: readonly { min: number; max: number }[] = [
  { min: 0x61, max: 0x7a },
  { min: 0x41, max: 0x5a },
  { min: 0x30, max: 0x39 },
  { min: 0x20, max: 0x7e },
  { min: 0x0a, max: 0x0a },
  { min: 0x09, max: 0x09 },
  { min: 0xc0, max: 0xff },
  { min: 0xa0, max: 0xd7ff },
];

/** Members found, by language and lengths: sets are rebuilt by every intersection, their languages are shared. */
const MEMBERS = new Map<string, string | null>();
const MAX_MEMBERS = 10_000;

/**
 * A set of strings: those of a regular language (null: every string) whose length in code points is in `lengths`
 * (null: any). Exact: emptiness and a member are found by walking the automaton length by length. Only a set with
 * one part (a language, or lengths) has a complement; the conditions `writ diff` models each make one part.
 */
export class StringSet {
  private example: string | null | undefined;

  constructor(
    readonly language: Language | null,
    readonly lengths: NumberSet | null,
  ) {}

  static readonly ALL = new StringSet(null, null);
  static readonly NONE = new StringSet(Language.words([]), null);

  static ofLengths(lengths: NumberSet): StringSet {
    return new StringSet(null, lengths.intersect(NumberSet.span(true, 0, Infinity)));
  }

  intersect(other: StringSet): StringSet {
    if (other === StringSet.ALL) return this;
    if (this === StringSet.ALL) return other;
    const language = this.language && other.language ? this.language.intersect(other.language) : (this.language ?? other.language);
    const lengths = this.lengths && other.lengths ? this.lengths.intersect(other.lengths) : (this.lengths ?? other.lengths);
    return new StringSet(language, lengths);
  }

  complement(): StringSet {
    if (this.language && this.lengths) throw new Error("internal: the complement of a string set with a language and lengths");
    if (this.lengths) return StringSet.ofLengths(this.lengths.complement());
    return this.language ? new StringSet(this.language.complement(), null) : StringSet.NONE;
  }

  has(s: string): boolean {
    return (this.language === null || this.language.has(s)) && (this.lengths === null || this.lengths.has([...s].length));
  }

  isEmpty(): boolean {
    return this.member() === null;
  }

  /** The shortest member (its code points chosen to read well), or null when the set is empty. */
  member(): string | null {
    if (this.example === undefined) {
      const key = `${this.language?.id ?? "*"}|${this.lengths?.toString() ?? "*"}`;
      if (!MEMBERS.has(key)) {
        if (MEMBERS.size >= MAX_MEMBERS) MEMBERS.clear();
        MEMBERS.set(key, this.findMember());
      }
      this.example = MEMBERS.get(key)!;
    }
    return this.example;
  }

  /** Members for a search: the shortest, and the hints that belong. */
  samples(hints: readonly string[]): string[] {
    const first = this.member();
    return [...new Set([...(first === null ? [] : [first]), ...hints.filter((h) => this.has(h))])];
  }

  private findMember(): string | null {
    const lengths = this.lengths ?? NumberSet.span(true, 0, Infinity);
    if (lengths.isEmpty()) return null;
    const language = this.language ?? Language.ALL;
    if (language.isEmpty()) return null;
    return new Walk(language.dfa).member(lengths);
  }
}

type Node = DFA.ReadonlyNode;

/**
 * The automaton's states reachable in exactly k steps, for k = 0, 1, ...: a sequence that repeats from some point,
 * so every length, however large, is decided by a finite walk.
 */
class Walk {
  private readonly ids = new Map<Node, number>();
  private readonly layers: Node[][] = [];
  private readonly finals: ReadonlySet<Node>;
  /** When the layers repeat: layer `k >= cycleStart` is layer `cycleStart + (k - cycleStart) % period`. */
  private cycleStart = -1;
  private period = 0;

  constructor(private readonly dfa: DFA) {
    this.finals = dfa.finals;
  }

  member(lengths: NumberSet): string | null {
    const seen = new Map<string, number>();
    let layer: Node[] = [this.dfa.initial];
    const lastFinite = lengths.spans[lengths.spans.length - 1]!.hi;
    for (let k = 0; ; k++) {
      if (layer.length === 0) return null;
      this.layers.push(layer);
      if (lengths.has(k) && layer.some((n) => this.finals.has(n))) return this.spell(k);
      if (k >= lastFinite) return null;
      if (k > MAX_WITNESS_LENGTH) throw new DomainLimitError(`a string would need more than ${MAX_WITNESS_LENGTH} code points`);
      const key = layer
        .map((n) => this.id(n))
        .sort((a, b) => a - b)
        .join(",");
      const first = seen.get(key);
      if (first !== undefined) {
        this.layers.pop();
        this.cycleStart = first;
        this.period = k - first;
        const length = this.firstLengthInCycle(lengths, k);
        return length === null ? null : this.spell(length);
      }
      seen.set(key, k);
      const next = new Set<Node>();
      for (const n of layer) for (const [, to] of n.out) next.add(to);
      layer = [...next];
    }
  }

  /** The smallest length >= from in `lengths` whose layer (the sequence now repeating) holds a final state. */
  private firstLengthInCycle(lengths: NumberSet, from: number): number | null {
    let best: number | null = null;
    for (let r = 0; r < this.period; r++) {
      if (!this.layers[this.cycleStart + r]!.some((n) => this.finals.has(n))) continue;
      for (const s of lengths.spans) {
        const lo = Math.max(s.lo, from);
        if (lo > s.hi) continue;
        const offset = (((this.cycleStart + r - lo) % this.period) + this.period) % this.period;
        const k = lo + offset;
        if (k <= s.hi && (best === null || k < best)) best = k;
      }
    }
    if (best !== null && best > MAX_WITNESS_LENGTH)
      throw new DomainLimitError(`a string would need more than ${MAX_WITNESS_LENGTH} code points`);
    return best;
  }

  private layer(k: number): Node[] {
    return k < this.layers.length ? this.layers[k]! : this.layers[this.cycleStart + ((k - this.cycleStart) % this.period)]!;
  }

  /** A string of `length` code points the automaton accepts, walking back from a final state of that layer. */
  private spell(length: number): string {
    let current = this.layer(length).find((n) => this.finals.has(n))!;
    const out: number[] = [];
    for (let k = length; k > 0; k--) {
      let chosen: { node: Node; char: number; rank: number } | null = null;
      for (const from of this.layer(k - 1)) {
        for (const [range, to] of from.out) {
          if (to !== current) continue;
          const [char, rank] = preferredChar(range.min, range.max);
          if (chosen === null || rank < chosen.rank) chosen = { node: from, char, rank };
        }
      }
      out.push(chosen!.char);
      current = chosen!.node;
    }
    return String.fromCodePoint(...out.reverse());
  }

  private id(n: Node): number {
    let id = this.ids.get(n);
    if (id === undefined) this.ids.set(n, (id = this.ids.size));
    return id;
  }
}

/** The most readable code point of min..max, and its rank (lower reads better). */
function preferredChar(min: number, max: number): [number, number] {
  for (let rank = 0; rank < PREFERRED.length; rank++) {
    const p = PREFERRED[rank]!;
    const lo = Math.max(min, p.min);
    if (lo <= Math.min(max, p.max)) return [lo, rank];
  }
  return [min, PREFERRED.length];
}
