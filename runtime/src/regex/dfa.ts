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
import { Alphabet, TABLE_SIZE } from "./alphabet.js";
import { ASSERT, CHAR, MATCH, SPLIT, type Assertion, type Nfa } from "./nfa.js";

/** The cache's bound: states, the NFA states all their kernels hold, and the transition table's entries. */
const MAX_DFA_STATES = 4096;
const MAX_KERNEL_ENTRIES = 1 << 18;
const MAX_TRANSITIONS = 1 << 20;

/** The context at the start of the input, and any context but that one (each assertion on it passes). */
const AT_START = 0;
const NOT_START = -1;
/** The class argument at the end of the input, and when it is not known (each assertion on it passes). */
const AT_END = -1;
const UNKNOWN = -2;

/** Transition targets besides state offsets (which are positive): not computed yet, and the answers known early. */
const UNSET = 0;
const MATCHED = -1;
const NO_MATCH = -2;

class DfaState {
  /** Whether the input may end here: computed on first use. */
  atEnd: boolean | undefined = undefined;
  constructor(
    readonly id: number,
    readonly kernel: Int32Array,
    readonly context: number,
  ) {}
}

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
  /** The DFA states by id (0 is UNSET), and by a hash of kernel and context (a bucket holds those that collide). */
  private states: (DfaState | undefined)[] = [undefined];
  private readonly cache = new Map<number, DfaState[]>();
  private cachedEntries = 0;
  /**
   * The transitions, one row of 2^shift entries (a class each) per state, state `id`'s at offset `id << shift`:
   * `trans[offset + class]` is the target's offset, MATCHED, NO_MATCH, or UNSET until first used. A flat table of
   * offsets keeps a warm step to two array reads and an addition (bench:budget runs without the optimizing compiler).
   */
  private trans = new Int32Array(64 << 4);
  private shift = 4;
  private initial = UNSET;
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
    let state = this.initial === UNSET ? this.start() : this.initial;
    const { table } = this.alphabet;
    let { trans } = this;
    const n = input.length;
    let i = 0;
    while (i < n) {
      let cp = input.charCodeAt(i++);
      if (cp >= 0xd800 && (cp & 0xfc00) === 0xd800 && i < n) {
        const low = input.charCodeAt(i);
        if ((low & 0xfc00) === 0xdc00) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          i++;
        }
      }
      let k = cp < TABLE_SIZE ? table[cp]! : -1;
      if (k < 0) {
        // A new class may widen the rows, and the offsets with them.
        const id = this.idAt(state);
        k = this.classOf(cp);
        state = this.offsetOf(id);
        trans = this.trans;
      }
      let next = trans[state + k]!;
      if (next <= UNSET) {
        if (next === UNSET) {
          next = this.transition(this.idAt(state), k);
          trans = this.trans;
        }
        if (next < UNSET) return next === MATCHED;
      }
      state = next;
    }
    const last = this.states[this.idAt(state)]!;
    return last.atEnd ?? (last.atEnd = this.closure(last.kernel, last.context, AT_END) < 0);
  }

  private offsetOf(id: number): number {
    return id << this.shift;
  }

  private idAt(offset: number): number {
    return offset >> this.shift;
  }

  /** A code point's class, the transition table widened first when it is a new class beyond its rows' width. */
  private classOf(cp: number): number {
    const k = this.alphabet.classOf(cp);
    if (k >> this.shift !== 0) {
      const from = this.shift;
      let shift = from;
      while (k >> shift !== 0) shift++;
      const wider = new Int32Array(this.trans.length << (shift - from));
      for (let id = 1; id < this.states.length; id++) {
        for (let c = 0; c < 1 << from; c++) {
          const target = this.trans[(id << from) + c]!;
          wider[(id << shift) + c] = target > UNSET ? (target >> from) << shift : target;
        }
      }
      this.trans = wider;
      this.shift = shift;
      if (this.initial > UNSET) this.initial = (this.initial >> from) << shift;
    }
    return k;
  }

  private matchesInsidePair(): boolean {
    const none = this.alphabet.noneClass();
    return this.closure(Int32Array.of(this.nfa.start), this.contextOf(none), none) < 0;
  }

  /** The initial state's offset. */
  private start(): number {
    return (this.initial = this.intern(Int32Array.of(this.nfa.start), AT_START));
  }

  /** The target's offset (or MATCHED, NO_MATCH) of state `id` on class `k`, computed and kept in the table. */
  private transition(id: number, k: number): number {
    const { kernel: from, context } = this.states[id]!;
    const found = this.closure(from, context, k);
    if (found < 0) return (this.trans[this.offsetOf(id) + k] = MATCHED);
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
    const flushes = this.work.flushes;
    const target = this.intern(kernel.slice(0, size).sort(), this.contextOf(k));
    // After a flush `id` names another state, or none.
    if (this.work.flushes === flushes) this.trans[this.offsetOf(id) + k] = target;
    return target;
  }

  /** The offset of the DFA state of a sorted kernel and a context; NO_MATCH when no match can follow, whatever the input. */
  private intern(kernel: Int32Array, context: number): number {
    // Only the search's next start left, and it cannot start a match any more (the pattern begins with `^`).
    if (this.restartsDie && kernel.length === 1 && kernel[0] === this.nfa.start && context !== AT_START) return NO_MATCH;
    let hash = context;
    for (const s of kernel) hash = Math.imul(hash ^ s, 0x01000193);
    const known = this.cache.get(hash)?.find((d) => d.context === context && sameStates(d.kernel, kernel));
    if (known !== undefined) return this.offsetOf(known.id);
    if (
      this.states.length > MAX_DFA_STATES ||
      this.cachedEntries + kernel.length > MAX_KERNEL_ENTRIES ||
      this.offsetOf(this.states.length + 1) > MAX_TRANSITIONS
    ) {
      this.flush();
    }
    const state = new DfaState(this.states.length, kernel, context);
    this.states.push(state);
    if (this.offsetOf(this.states.length) > this.trans.length) {
      const longer = new Int32Array(this.trans.length * 2);
      longer.set(this.trans);
      this.trans = longer;
    }
    const bucket = this.cache.get(hash);
    if (bucket === undefined) this.cache.set(hash, [state]);
    else bucket.push(state);
    this.cachedEntries += kernel.length;
    this.work.dfaStates++;
    return this.offsetOf(state.id);
  }

  private flush(): void {
    this.states = [undefined];
    this.cache.clear();
    this.cachedEntries = 0;
    this.trans.fill(UNSET);
    this.initial = UNSET;
    this.work.flushes++;
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
