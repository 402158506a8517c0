import { analyze } from "./analyze.js";
import { buildAst } from "./build-ast.js";
import { lex } from "./lex.js";
import { lower } from "./lower.js";
import { parse } from "./parse.js";
import type { Phase } from "./pipeline.js";
import { resolve } from "./resolve.js";
import { typeCheck } from "./type-check.js";

/**
 * The seven phases from the text to the IR, in order, as data (docs/compiler.md describes each). They run in memory
 * anywhere, a browser included: editors and the playground run these; `PHASES` adds emit.
 */
export const PHASES_TO_IR: readonly Phase[] = [
  {
    name: "lex",
    guarantee: "the text is a sequence of known tokens; strings and regular expressions close on their line",
    after: [],
    haltOnError: false,
    run: (ctx, s) => Object.assign(s, lex(ctx)),
  },
  {
    name: "parse",
    guarantee: "the tokens form a complete policy per the grammar, sections in order, within the nesting and length limits",
    after: ["lex"],
    haltOnError: true,
    run: (ctx, s) => {
      const cst = parse(ctx, s.tokens!);
      if (cst) s.cst = cst;
    },
  },
  {
    name: "build-ast",
    guarantee: "every node has a span; literals are decoded and valid; id, version, action and signal constraints are well formed",
    after: ["parse"],
    haltOnError: false,
    run: (ctx, s) => {
      s.ast = buildAst(ctx, s.cst!, s.comments!);
    },
  },
  {
    name: "resolve",
    guarantee: "every name is declared once and every reference resolves to a signal, constant or builtin",
    after: ["build-ast"],
    haltOnError: false,
    run: (ctx, s) => {
      s.symbols = resolve(ctx, s.ast!);
    },
  },
  {
    name: "type-check",
    guarantee: "every expression is well typed and every condition is boolean",
    after: ["resolve"],
    haltOnError: true,
    run: (ctx, s) => {
      s.typing = typeCheck(ctx, s.ast!, s.symbols!);
    },
  },
  {
    name: "analyze",
    guarantee: "warnings name every rule that can never decide and a missing catch-all; the policy is unchanged",
    after: ["type-check"],
    haltOnError: false,
    run: (ctx, s) => analyze(ctx, s.ast!, s.symbols!, s.typing!),
  },
  {
    name: "lower",
    guarantee: "the IR decides exactly as the source reads, with constants inlined and certain subexpressions folded",
    after: ["type-check"],
    haltOnError: true,
    run: (ctx, s) => {
      s.ir = lower(ctx, s.ast!, s.symbols!, s.typing!);
    },
  },
];
