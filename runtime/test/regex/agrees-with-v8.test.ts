/**
 * The linear-time engine answers `test` as V8's RegExp with the `u` flag, on random patterns of every construct it
 * runs (literals, astral characters and surrogate escapes, classes, `.`, `\d \w \s`, `\p{...}`, anchors, word
 * boundaries, one-character lookarounds, groups, alternation, every quantifier, empty matches) and random strings of
 * the characters those patterns name, lone surrogates included. Patterns stay small so V8 answers fast.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileLinearRegExp } from "../../src/index.js";

/** The characters strings are made of: ASCII letters, digits, blanks, Latin-1, an astral run, lone surrogates. */
const CHARS = ["a", "b", "c", "A", "0", "7", "_", "-", " ", "\n", "\u2028", "é", "ß", "😀", "😁", "😂", "\uD83D", "\uDE00", "Ж"];

const LITERALS = [
  "a",
  "b",
  "c",
  "A",
  "0",
  "_",
  "-",
  " ",
  "é",
  "😀",
  "\\u{1F601}",
  "\\uD83D\\uDE02",
  "\\uD83D",
  "\\uDE00",
  "\\n",
  "\\.",
  "Ж",
];
const SETS = [
  ".",
  "\\d",
  "\\D",
  "\\w",
  "\\W",
  "\\s",
  "\\S",
  "\\p{L}",
  "\\P{L}",
  "\\p{Lu}",
  "\\p{Script=Cyrillic}",
  "[a-c]",
  "[^a]",
  "[\\d_]",
  "[😀-😁]",
  "[^\\s]",
  "[\\uD83D]",
  "[]",
  "[^]",
  "[\\p{L}\\d]",
  "[^\\w-]",
];
const QUANTIFIERS = ["*", "+", "?", "*?", "+?", "??", "{2}", "{0,2}", "{1,3}", "{2,}", "{0}", "{1,3}?"];

const atom = fc.constantFrom(...LITERALS, ...SETS);
/** A lookaround's body: one character or class, an alternation of them, or empty. */
const lookBody = fc.oneof(
  atom,
  fc.tuple(atom, atom).map(([x, y]) => `${x}|${y}`),
  fc.constant(""),
);
const assertion = fc.oneof(
  fc.constantFrom("^", "$", "\\b", "\\B"),
  fc.tuple(fc.constantFrom("(?=", "(?!", "(?<=", "(?<!"), lookBody).map(([open, body]) => `${open}${body})`),
);

const { pattern } = fc.letrec<{ pattern: string; term: string; factor: string }>((tie) => ({
  pattern: fc.array(tie("term"), { minLength: 1, maxLength: 3 }).map((alts) => alts.join("|")),
  term: fc
    .array(fc.oneof({ weight: 3, arbitrary: tie("factor") }, { weight: 1, arbitrary: assertion }), { maxLength: 4 })
    .map((fs) => fs.join("")),
  factor: fc.oneof(
    { weight: 4, arbitrary: atom },
    { weight: 2, arbitrary: fc.tuple(atom, fc.constantFrom(...QUANTIFIERS)).map(([a, q]) => a + q) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom("(", "(?:"), tie("pattern"), fc.constantFrom("", ...QUANTIFIERS))
        .map(([open, body, q]) => `${open}${body})${q}`),
    },
  ),
}));

const input = fc.array(fc.constantFrom(...CHARS), { maxLength: 12 }).map((cs) => cs.join(""));

describe("the linear-time engine against V8 (`u` flag)", () => {
  it("answers test() as new RegExp(pattern, 'u') does, for every pattern and string", () => {
    fc.assert(
      fc.property(pattern, fc.array(input, { minLength: 1, maxLength: 8 }), (p, inputs) => {
        const native = new RegExp(p, "u");
        const linear = compileLinearRegExp(p);
        // The same matcher for every string: its cached DFA states must answer as a fresh one does.
        for (const s of inputs) expect({ p, s, answer: linear.test(s) }).toEqual({ p, s, answer: native.test(s) });
      }),
      { numRuns: Number(process.env.RUNS ?? 3000) },
    );
  });
});
