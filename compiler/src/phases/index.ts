import type { CstNode, IToken } from "chevrotain";
import type { PolicyIr } from "@writ/runtime";
import type { PolicyAst } from "../syntax/ast.js";
import { analyze } from "./analyze.js";
import { buildAst } from "./build-ast.js";
import type { PhaseContext } from "./context.js";
import { emit, type Bundle, type EmitOptions } from "./emit.js";
import { lex } from "./lex.js";
import { lower } from "./lower.js";
import { parse } from "./parse.js";
import { resolve, type Symbols } from "./resolve.js";
import { typeCheck, type Typing } from "./type-check.js";

/** What the phases hand each other. A phase reads only what the phases it runs after have written. */
export interface PipelineState {
  tokens?: IToken[];
  comments?: IToken[];
  cst?: CstNode;
  ast?: PolicyAst;
  symbols?: Symbols;
  typing?: Typing;
  ir?: PolicyIr;
  bundle?: Bundle;
}

export interface Phase {
  readonly name: PhaseName;
  /** What holds of the policy once this phase has run without errors. */
  readonly guarantee: string;
  /** Phases whose output this one reads; the list below is ordered so each comes after these. */
  readonly after: readonly PhaseName[];
  /** When true, errors in this phase stop the pipeline: later phases would only report their echoes. */
  readonly haltOnError: boolean;
  run(ctx: PhaseContext, state: PipelineState, options: EmitOptions): void;
}

export type PhaseName = "lex" | "parse" | "build-ast" | "resolve" | "type-check" | "analyze" | "lower" | "emit";

/** The eight phases, in order, as data (docs/compiler.md describes each). */
export const PHASES: readonly Phase[] = [
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
  {
    name: "emit",
    guarantee: "the bundle's hashes match its bytes, and the same source and key give the same bytes",
    after: ["lower"],
    haltOnError: true,
    run: (ctx, s, options) => {
      s.bundle = emit(ctx, s.ast!, s.ir!, options);
    },
  },
];
