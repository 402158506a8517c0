/**
 * RE2's way of running an NFA: a DFA built lazily, one state per set of NFA states met, each transition computed on
 * first use and cached, so a warm match costs a table lookup per code point and a cold one O(NFA size) per code point.
 * Answers `RegExp.prototype.test` with the `u` flag: is there a match starting at any code point boundary.
 *
 * A DFA state is a kernel (the NFA states reached, before the moves that depend on the next code point) and a
 * context (what the assertions need to know of the previous code point: none at the start, else its word-ness and
 * lookbehind membership). Stepping on a code point's class first closes the kernel under epsilon moves, deciding each
 * assertion from the context and that class, then moves the CHAR states whose atom contains the class, and adds the
 * start state again (the search's next start). The cache is bounded: when full it is flushed, as RE2 does, so memory
 * stays bounded and time stays O(input length × NFA size).
 */
import { Alphabet } from "./alphabet.js";
import { ASSERT, CHAR, MATCH, SPLIT, type Assertion, type Nfa } from "./nfa.js";

/** The cache's bound: states, and the NFA states all their kernels hold. */
const MAX_DFA_STATES = 4096;
const MAX_KERNEL_ENTRIES = 1 << 18;

/** The context at the start of the input, and any context but that one (each assertion on it passes). */
const AT_START = 0;
const NOT_START = -1;
/** The class argument at the end of the input, and when it is not known (each assertion on it passes). */
const AT_END = -1;
const UNKNOWN = -2;

class DfaState {
  /** Transitions by class, filled on first use. */
  readonly next: (DfaState | undefined)[] = [];
  /** Whether the input may end here: computed on first use. */
  atEnd: boolean | undefined = undefined;
  constructor(
    /** MATCHED or NO_MATCH: the answer is known whatever follows. */
    readonly final: boolean,
    readonly accept: boolean,
    readonly kernel: Int32Array,
    readonly context: number,
  ) {}
}

const MATCHED = new DfaState(true, true, new Int32Array(0), AT_START);
const NO_MATCH = new DfaState(true, false, new Int32Array(0), AT_START);

/** What a matcher has done since it was built: the figures a test bounds to show the work is linear. */
export interface MatcherWork {
  /** The NFA's size, which bounds the visits one code point can cost. */
  readonly nfaStates: number;
  /** NFA states visited while building DFA states and transitions. */
  readonly nfaVisits: number;
  readonly dfaStates: number;
  readonly flushes: number;
}

export class LazyDfa {
  private readonly alphabet: Alphabet;
  /** The DFA states by a hash of kernel and context; a bucket holds those whose hashes collide. */
  private readonly cache = new Map<number, DfaState[]>();
  private cachedStates = 0;
  private cachedEntries = 0;
  private initial: DfaState | undefined;
  /** Per class, its context id; per context, one class that has it (AT_START has none). */
  private readonly classContext: number[] = [];
  private readonly contextClass: number[] = [-1];
  private readonly contextIds = new Map<string, number>();
  /** The atoms the context keeps of the previous code point: `\w` and those of lookbehinds. */
  private readonly contextAtoms: readonly number[];
  /** Scratch space of a closure: a mark per NFA state (current when equal to `generation`), a stack, the CHAR states. */
  private readonly mark: Uint32Array;
  private generation = 0;
  private readonly stack: Int32Array;
  private readonly chars: Int32Array;
  /** Scratch space of a transition: the kernel it builds. */
  private readonly kernel: Int32Array;
  private work = { nfaVisits: 0, dfaStates: 0, flushes: 0 };
  /** Whether a match can never start after the first code point (the pattern begins with `^`, say). */
  private readonly restartsDie: boolean;
  /**
   * Whether the pattern matches inside a surrogate pair. V8 also tries a match there (it steps through the input by
   * code unit), where both neighbours are no character at all, neither the input's ends nor in any set, so only an
   * empty match can be found: `\B` or `(?!a)` finds one in any string with a pair.
   */
  private insidePair: boolean | undefined;

  constructor(private readonly nfa: Nfa) {
    this.alphabet = new Alphabet(nfa.atoms);
    const size = nfa.kind.length;
    this.mark = new Uint32Array(size);
    this.stack = new Int32Array(size);
    this.chars = new Int32Array(size);
    this.kernel = new Int32Array(size);
    const kept = new Set<number>();
    if (nfa.wordAtom >= 0) kept.add(nfa.wordAtom);
    for (const a of nfa.assertions) if (a.kind === "look" && a.behind) a.atoms.forEach((atom) => kept.add(atom));
    this.contextAtoms = [...kept];
    this.restartsDie = this.closure(Int32Array.of(nfa.start), NOT_START, UNKNOWN) === 0;
  }

  get counted(): MatcherWork {
    return { nfaStates: this.nfa.kind.length, ...this.work };
  }

  test(input: string): boolean {
    if ((this.insidePair ??= this.matchesInsidePair()) && hasSurrogatePair(input)) return true;
    let state = this.initial ?? this.start();
    if (state.final) return state.accept;
    const { table } = this.alphabet;
    const n = input.length;
    let i = 0;
    while (i < n) {
      let cp = input.charCodeAt(i++);
      if ((cp & 0xfc00) === 0xd800 && i < n) {
        const low = input.charCodeAt(i);
        if ((low & 0xfc00) === 0xdc00) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          i++;
        }
      }
      let k = cp < table.length ? table[cp]! : -1;
      if (k < 0) k = this.alphabet.classOf(cp);
      const next = state.next[k] ?? this.transition(state, k);
      if (next.final) return next.accept;
      state = next;
    }
    return state.atEnd ?? (state.atEnd = this.closure(state.kernel, state.context, AT_END) < 0);
  }

  private matchesInsidePair(): boolean {
    const none = this.alphabet.noneClass();
    return this.closure(Int32Array.of(this.nfa.start), this.contextOf(none), none) < 0;
  }

  private start(): DfaState {
    return (this.initial = this.intern(Int32Array.of(this.nfa.start), AT_START));
  }

  private transition(state: DfaState, k: number): DfaState {
    const found = this.closure(state.kernel, state.context, k);
    let target: DfaState;
    if (found < 0) {
      target = MATCHED;
    } else {
      const { out, arg, start } = this.nfa;
      const { mark, chars, kernel } = this;
      const members = this.alphabet.members[k]!;
      const generation = this.nextGeneration();
      let size = 0;
      for (let i = 0; i < found; i++) {
        const s = chars[i]!;
        const to = out[s]!;
        if (members[arg[s]!] === 1 && mark[to] !== generation) {
          mark[to] = generation;
          kernel[size++] = to;
        }
      }
      if (mark[start] !== generation) kernel[size++] = start;
      target = this.intern(kernel.slice(0, size).sort(), this.contextOf(k));
    }
    state.next[k] = target;
    return target;
  }

  /** The DFA state of a sorted kernel and a context; NO_MATCH when no match can follow, whatever the input. */
  private intern(kernel: Int32Array, context: number): DfaState {
    // Only the search's next start left, and it cannot start a match any more (the pattern begins with `^`).
    if (this.restartsDie && kernel.length === 1 && kernel[0] === this.nfa.start && context !== AT_START) return NO_MATCH;
    let hash = context;
    for (const s of kernel) hash = Math.imul(hash ^ s, 0x01000193);
    const bucket = this.cache.get(hash);
    const known = bucket?.find((d) => d.context === context && sameStates(d.kernel, kernel));
    if (known !== undefined) return known;
    if (this.cachedStates >= MAX_DFA_STATES || this.cachedEntries + kernel.length > MAX_KERNEL_ENTRIES) {
      this.cache.clear();
      this.cachedStates = 0;
      this.cachedEntries = 0;
      this.initial = undefined;
      this.work.flushes++;
    }
    const state = new DfaState(false, false, kernel, context);
    const kept = this.cache.get(hash);
    if (kept === undefined) this.cache.set(hash, [state]);
    else kept.push(state);
    this.cachedStates++;
    this.cachedEntries += kernel.length;
    this.work.dfaStates++;
    return state;
  }

  /**
   * Closes `kernel` under epsilon moves, with the previous code point's `context` (or NOT_START) and the next one's
   * class `next` (or AT_END, or UNKNOWN). Leaves the CHAR states reached in `chars` and answers
   * their count, or -1 when MATCH is reached.
   */
  private closure(kernel: Int32Array, context: number, next: number): number {
    const { kind, out, out2, arg } = this.nfa;
    const { mark, stack, chars } = this;
    const generation = this.nextGeneration();
    let top = 0;
    let found = 0;
    for (const s of kernel) {
      if (mark[s] !== generation) {
        mark[s] = generation;
        stack[top++] = s;
      }
    }
    while (top > 0) {
      const s = stack[--top]!;
      this.work.nfaVisits++;
      let to = -1;
      switch (kind[s]) {
        case CHAR:
          chars[found++] = s;
          break;
        case MATCH:
          return -1;
        case SPLIT: {
          const other = out2[s]!;
          if (mark[other] !== generation) {
            mark[other] = generation;
            stack[top++] = other;
          }
          to = out[s]!;
          break;
        }
        case ASSERT:
          if (this.holds(this.nfa.assertions[arg[s]!]!, context, next)) to = out[s]!;
          break;
      }
      if (to >= 0 && mark[to] !== generation) {
        mark[to] = generation;
        stack[top++] = to;
      }
    }
    return found;
  }

  private holds(a: Assertion, context: number, next: number): boolean {
    switch (a.kind) {
      case "start":
        return context === AT_START;
      case "end":
        return next === AT_END || next === UNKNOWN;
      case "word":
        if (next === UNKNOWN || context === NOT_START) return true;
        return (this.isWord(this.contextClass[context]!) !== this.isWord(next)) !== a.negate;
      case "look":
        if (a.behind) return context === NOT_START || this.contains(a, this.contextClass[context]!) !== a.negate;
        return next === UNKNOWN || this.contains(a, next) !== a.negate;
    }
  }

  /** Whether class `k` (-1: no code point) is a word character. */
  private isWord(k: number): boolean {
    return k >= 0 && this.alphabet.members[k]![this.nfa.wordAtom] === 1;
  }

  /** Whether the lookaround's body matches the code point of class `k` (-1: there is none). */
  private contains(a: Extract<Assertion, { kind: "look" }>, k: number): boolean {
    if (a.always) return true;
    if (k < 0) return false;
    const members = this.alphabet.members[k]!;
    return a.atoms.some((atom) => members[atom] === 1);
  }

  /** Classes that agree on the atoms the context keeps share a context, so they share DFA states. */
  private contextOf(k: number): number {
    const known = this.classContext[k];
    if (known !== undefined) return known;
    const members = this.alphabet.members[k]!;
    const key = this.contextAtoms.map((atom) => members[atom]).join("");
    let id = this.contextIds.get(key);
    if (id === undefined) {
      id = this.contextClass.push(k) - 1;
      this.contextIds.set(key, id);
    }
    this.classContext[k] = id;
    return id;
  }

  private nextGeneration(): number {
    if (this.generation === 0xffffffff) {
      this.mark.fill(0);
      this.generation = 0;
    }
    return ++this.generation;
  }
}

function sameStates(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function hasSurrogatePair(input: string): boolean {
  for (let i = 0; i + 1 < input.length; i++) {
    if ((input.charCodeAt(i) & 0xfc00) === 0xd800 && (input.charCodeAt(i + 1) & 0xfc00) === 0xdc00) return true;
  }
  return false;
}
