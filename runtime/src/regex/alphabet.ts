/**
 * The character sets of one pattern and the partition of the code points they induce. An atom is one thing of the
 * pattern that matches one code point: a literal character, or a set (`[...]`, `.`, `\d`, `\w`, `\s`, `\p{...}` and
 * their negations). Membership in a set is decided by V8 itself, through a native RegExp over that set alone (no
 * quantifier, so constant time), so the engine cannot disagree with V8, nor with ajv's `pattern`, on any character.
 * A code point's class is the set of atoms that contain it; the automaton's transitions are indexed by class.
 */
export type Atom = { readonly kind: "char"; readonly value: number } | { readonly kind: "set"; readonly source: string };

/** Code points below this have their class in a table; the others in a map of bounded size. */
export const TABLE_SIZE = 256;
const MAP_LIMIT = 4096;

export class Alphabet {
  /** `members[c][a]` is 1 when atom `a` contains the code points of class `c`. */
  readonly members: Uint8Array[] = [];
  /** The class of each code point below TABLE_SIZE, -1 until first seen. */
  readonly table = new Int32Array(TABLE_SIZE).fill(-1);
  private readonly beyond = new Map<number, number>();
  private readonly classIds = new Map<string, number>();
  private readonly tests: ((cp: number) => boolean)[];

  constructor(readonly atoms: readonly Atom[]) {
    this.tests = atoms.map((atom) => {
      if (atom.kind === "char") {
        const { value } = atom;
        return (cp: number) => cp === value;
      }
      const re = new RegExp(`^(?:${atom.source})$`, "u");
      return (cp: number) => re.test(String.fromCodePoint(cp));
    });
  }

  /** The class of a code point (a lone surrogate is a code point of its own, as with the `u` flag). */
  classOf(cp: number): number {
    if (cp < TABLE_SIZE) {
      const known = this.table[cp]!;
      if (known >= 0) return known;
      return (this.table[cp] = this.compute(cp));
    }
    const known = this.beyond.get(cp);
    if (known !== undefined) return known;
    if (this.beyond.size >= MAP_LIMIT) this.beyond.clear();
    const id = this.compute(cp);
    this.beyond.set(cp, id);
    return id;
  }

  /** The class of no atom: what V8 reads on either side of a position inside a surrogate pair. */
  noneClass(): number {
    return this.intern(new Uint8Array(this.tests.length));
  }

  private compute(cp: number): number {
    const bits = new Uint8Array(this.tests.length);
    for (let a = 0; a < bits.length; a++) bits[a] = this.tests[a]!(cp) ? 1 : 0;
    return this.intern(bits);
  }

  private intern(bits: Uint8Array): number {
    const key = bits.join("");
    const known = this.classIds.get(key);
    if (known !== undefined) return known;
    const id = this.members.length;
    this.members.push(bits);
    this.classIds.set(key, id);
    return id;
  }
}
