import {
  CstParser,
  EOF,
  type CstNode,
  type IOrAlt,
  type IParserErrorMessageProvider,
  type IRecognitionException,
  type IToken,
  type TokenType,
} from "chevrotain";
import type { InfixOp, PrefixOp } from "@writ/runtime";
import { bareWord, reservedNow } from "./habits.js";
import { infixAt, prefixAt } from "./operators.js";
import * as T from "./tokens.js";

/** What a person calls each token, for messages such as "expected a string, found `{`". */
export function tokenLabel(t: TokenType): string {
  if (t === EOF) return "the end of the file";
  switch (t.name) {
    case "Identifier":
      return "a name";
    case "StringLiteral":
      return "a string";
    case "NumberLiteral":
      return "a number";
    case "DurationLiteral":
      return "a duration";
    case "RegexLiteral":
      return "a regular expression `/.../`";
  }
  const pattern = t.PATTERN;
  return pattern instanceof RegExp ? `\`${pattern.source.replace(/\\/g, "")}\`` : t.name;
}

function describeToken(tok: IToken): string {
  return tok.tokenType === EOF ? "the end of the file" : `\`${tok.image}\``;
}

function listLabels(paths: TokenType[][]): string {
  const labels = [...new Set(paths.map((p) => (p[0] ? tokenLabel(p[0]) : "the end of the file")))];
  if (labels.length <= 1) return labels[0] ?? "something else";
  return `${labels.slice(0, -1).join(", ")} or ${labels[labels.length - 1]}`;
}

const SECTION_KEYWORDS = ["policy", "governs", "signals", "const", "rule", "otherwise"];
const ORDER_HINT = "sections come in the order: policy, governs, signals, const, rule, otherwise";

/** Hints for messages a habit explains (syntax/habits.ts), by the token the message is about and the message. */
const habitHints = new WeakMap<IToken, Map<string, string>>();

/** `message`, with what writ writes instead when `actual` is a habit where `expected` may stand. */
function withHabit(message: string, expected: readonly TokenType[], actual: IToken): string {
  const habit = bareWord(expected, actual) ?? reservedNow(expected, actual);
  if (!habit) return message;
  const full = `${message}; ${habit.message}`;
  const hints = habitHints.get(actual) ?? new Map<string, string>();
  hints.set(full, habit.hint);
  habitHints.set(actual, hints);
  return full;
}

const firstTokens = (paths: TokenType[][]): TokenType[] => paths.flatMap((p) => (p[0] ? [p[0]] : []));

const messages: IParserErrorMessageProvider = {
  buildMismatchTokenMessage: ({ expected, actual }) =>
    withHabit(`expected ${tokenLabel(expected)}, found ${describeToken(actual)}`, [expected], actual),
  buildNotAllInputParsedMessage: ({ firstRedundant }) =>
    SECTION_KEYWORDS.includes(firstRedundant.image)
      ? `unexpected ${describeToken(firstRedundant)} here; ${ORDER_HINT}`
      : `unexpected ${describeToken(firstRedundant)}: expected another declaration, \`otherwise\` or the end of the file`,
  buildNoViableAltMessage: ({ expectedPathsPerAlt, actual }) =>
    withHabit(
      `expected ${listLabels(expectedPathsPerAlt.flat())}, found ${describeToken(actual[0]!)}`,
      firstTokens(expectedPathsPerAlt.flat()),
      actual[0]!,
    ),
  buildEarlyExitMessage: ({ expectedIterationPaths, actual }) =>
    withHabit(
      `expected ${listLabels(expectedIterationPaths)}, found ${describeToken(actual[0]!)}`,
      firstTokens(expectedIterationPaths),
      actual[0]!,
    ),
};

/**
 * The writ grammar (docs/language.md "Grammar" mirrors it). Text to CST only: no semantic actions, so the
 * build-ast phase is the one place that gives the tree meaning.
 */
class WritParser extends CstParser {
  constructor() {
    super(T.allTokens, { recoveryEnabled: true, maxLookahead: 3, nodeLocationTracking: "onlyOffset", errorMessageProvider: messages });
    this.performSelfAnalysis();
  }

  policyFile = this.RULE("policyFile", () => {
    this.SUBRULE(this.header);
    this.SUBRULE(this.governsClause);
    this.SUBRULE(this.signalsBlock);
    this.MANY(() => this.SUBRULE(this.constDecl));
    this.MANY2(() => this.SUBRULE(this.ruleDecl));
    this.OPTION(() => this.SUBRULE(this.otherwiseDecl));
  });

  header = this.RULE("header", () => {
    this.CONSUME(T.Policy);
    this.CONSUME(T.StringLiteral, { LABEL: "policyId" });
    this.CONSUME(T.Version);
    this.CONSUME2(T.StringLiteral, { LABEL: "version" });
  });

  governsClause = this.RULE("governsClause", () => {
    this.CONSUME(T.Governs);
    this.CONSUME(T.StringLiteral, { LABEL: "action" });
    this.OPTION(() => {
      this.CONSUME(T.Binding);
      this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => this.CONSUME(T.Identifier, { LABEL: "bound" }) });
    });
  });

  signalsBlock = this.RULE("signalsBlock", () => {
    this.CONSUME(T.Signals);
    this.CONSUME(T.LCurly);
    this.MANY(() => this.SUBRULE(this.signalDecl));
    this.CONSUME(T.RCurly);
  });

  signalDecl = this.RULE("signalDecl", () => {
    this.CONSUME(T.Identifier, { LABEL: "name" });
    this.OPTION(() => this.CONSUME(T.Question, { LABEL: "optional" }));
    this.CONSUME(T.Colon);
    this.SUBRULE(this.signalType);
  });

  signalType = this.RULE("signalType", () => {
    this.OR([
      {
        ALT: () => {
          this.CONSUME(T.StringType);
          this.MANY(() => this.SUBRULE(this.stringConstraint));
        },
      },
      {
        ALT: () => {
          this.OR2([{ ALT: () => this.CONSUME(T.NumberType) }, { ALT: () => this.CONSUME(T.IntegerType) }]);
          this.MANY2(() => this.SUBRULE(this.numberConstraint));
        },
      },
      {
        ALT: () => {
          this.CONSUME(T.DecimalType);
          this.CONSUME(T.LParen);
          this.CONSUME(T.NumberLiteral, { LABEL: "places" });
          this.CONSUME(T.RParen);
          this.MANY3(() => this.SUBRULE2(this.numberConstraint));
        },
      },
      { ALT: () => this.CONSUME(T.BooleanType) },
      { ALT: () => this.CONSUME(T.TimestampType) },
      { ALT: () => this.CONSUME(T.SemverType) },
      { ALT: () => this.CONSUME(T.IpType) },
      {
        ALT: () => this.AT_LEAST_ONE_SEP({ SEP: T.Pipe, DEF: () => this.CONSUME(T.StringLiteral, { LABEL: "enumValue" }) }),
      },
    ]);
  });

  stringConstraint = this.RULE("stringConstraint", () => {
    this.OR([
      {
        ALT: () => {
          this.CONSUME(T.Matching);
          this.CONSUME(T.RegexLiteral);
        },
      },
      { ALT: () => this.CONSUME(T.Normalized) },
      {
        ALT: () => {
          this.CONSUME(T.Length);
          this.SUBRULE(this.signedNumber, { LABEL: "min" });
          this.CONSUME(T.DotDot);
          this.SUBRULE2(this.signedNumber, { LABEL: "max" });
        },
      },
    ]);
  });

  numberConstraint = this.RULE("numberConstraint", () => {
    this.OR([
      {
        ALT: () => {
          this.OR2([
            { ALT: () => this.CONSUME(T.GtEq, { LABEL: "bound" }) },
            { ALT: () => this.CONSUME(T.Gt, { LABEL: "bound" }) },
            { ALT: () => this.CONSUME(T.LtEq, { LABEL: "bound" }) },
            { ALT: () => this.CONSUME(T.Lt, { LABEL: "bound" }) },
          ]);
          this.SUBRULE(this.signedNumber, { LABEL: "value" });
        },
      },
      {
        ALT: () => {
          this.SUBRULE2(this.signedNumber, { LABEL: "min" });
          this.CONSUME(T.DotDot);
          this.SUBRULE3(this.signedNumber, { LABEL: "max" });
        },
      },
    ]);
  });

  signedNumber = this.RULE("signedNumber", () => {
    this.OPTION(() => this.CONSUME(T.Minus));
    this.CONSUME(T.NumberLiteral);
  });

  constDecl = this.RULE("constDecl", () => {
    this.CONSUME(T.Const);
    this.CONSUME(T.Identifier, { LABEL: "name" });
    this.CONSUME(T.Equals);
    this.OR([{ ALT: () => this.SUBRULE(this.scalarLiteral) }, { ALT: () => this.SUBRULE(this.listLiteral) }]);
  });

  scalarLiteral = this.RULE("scalarLiteral", () => {
    this.OR([
      { ALT: () => this.SUBRULE(this.signedNumber) },
      { ALT: () => this.CONSUME(T.DurationLiteral) },
      { ALT: () => this.CONSUME(T.StringLiteral) },
      { ALT: () => this.CONSUME(T.True) },
      { ALT: () => this.CONSUME(T.False) },
    ]);
  });

  /** List items are literals or names of scalar constants. */
  listLiteral = this.RULE("listLiteral", () => {
    this.CONSUME(T.LBracket);
    this.MANY_SEP({
      SEP: T.Comma,
      DEF: () =>
        this.OR([
          { ALT: () => this.SUBRULE(this.scalarLiteral, { LABEL: "item" }) },
          { ALT: () => this.CONSUME(T.Identifier, { LABEL: "item" }) },
        ]),
    });
    this.CONSUME(T.RBracket);
  });

  ruleDecl = this.RULE("ruleDecl", () => {
    this.CONSUME(T.Rule);
    this.CONSUME(T.Identifier, { LABEL: "name" });
    this.CONSUME(T.When);
    this.SUBRULE(this.expression);
    this.SUBRULE(this.verdict);
    this.CONSUME(T.StringLiteral, { LABEL: "reason" });
  });

  otherwiseDecl = this.RULE("otherwiseDecl", () => {
    this.CONSUME(T.Otherwise);
    this.SUBRULE(this.verdict);
    this.CONSUME(T.StringLiteral, { LABEL: "reason" });
  });

  verdict = this.RULE("verdict", () => {
    this.OR([{ ALT: () => this.CONSUME(T.Approve) }, { ALT: () => this.CONSUME(T.Escalate) }, { ALT: () => this.CONSUME(T.Reject) }]);
  });

  expression = this.RULE("expression", () => {
    this.AT_LEAST_ONE_SEP({ SEP: T.tokenOf("or"), DEF: () => this.SUBRULE(this.andExpr, { LABEL: "operand" }) });
  });

  andExpr = this.RULE("andExpr", () => {
    this.AT_LEAST_ONE_SEP({ SEP: T.tokenOf("and"), DEF: () => this.SUBRULE(this.notExpr, { LABEL: "operand" }) });
  });

  notExpr = this.RULE("notExpr", () => {
    this.OR([
      {
        ALT: () => {
          this.operator(prefixAt("not"));
          this.SUBRULE(this.notExpr);
        },
      },
      { ALT: () => this.SUBRULE(this.predicate) },
    ]);
  });

  predicate = this.RULE("predicate", () => {
    this.SUBRULE(this.additive, { LABEL: "subject" });
    this.OPTION(() =>
      this.OR([
        {
          ALT: () => {
            this.operator(infixAt("predicate"), 2);
            this.SUBRULE2(this.additive, { LABEL: "object" });
          },
        },
        {
          ALT: () => {
            this.OPTION2(() => this.CONSUME(T.Not, { LABEL: "negated" }));
            this.OR3([
              {
                ALT: () => {
                  this.CONSUME(T.In);
                  this.SUBRULE(this.membershipTarget);
                },
              },
              {
                ALT: () => {
                  this.CONSUME(T.InCidr);
                  this.SUBRULE(this.cidrTarget);
                },
              },
            ]);
          },
        },
        {
          ALT: () => {
            this.CONSUME(T.Matches);
            this.CONSUME(T.RegexLiteral);
          },
        },
      ]),
    );
  });

  membershipTarget = this.RULE("membershipTarget", () => {
    this.OR([
      { ALT: () => this.SUBRULE(this.listLiteral) },
      {
        ALT: () => {
          this.SUBRULE(this.additive, { LABEL: "low" });
          this.OPTION(() => {
            this.CONSUME(T.DotDot);
            this.SUBRULE2(this.additive, { LABEL: "high" });
          });
        },
      },
    ]);
  });

  /** The ranges after `in_cidr`: a list literal, or a name (a list constant, type-check says). */
  cidrTarget = this.RULE("cidrTarget", () => {
    this.OR([{ ALT: () => this.SUBRULE(this.listLiteral) }, { ALT: () => this.SUBRULE(this.additive, { LABEL: "low" }) }]);
  });

  additive = this.RULE("additive", () => {
    this.SUBRULE(this.multiplicative, { LABEL: "operand" });
    this.MANY(() => {
      this.operator(infixAt("additive"));
      this.SUBRULE2(this.multiplicative, { LABEL: "operand" });
    });
  });

  multiplicative = this.RULE("multiplicative", () => {
    this.SUBRULE(this.unary, { LABEL: "operand" });
    this.MANY(() => {
      this.operator(infixAt("multiplicative"));
      this.SUBRULE2(this.unary, { LABEL: "operand" });
    });
  });

  unary = this.RULE("unary", () => {
    this.OR([
      {
        ALT: () => {
          this.operator(prefixAt("unary"));
          this.SUBRULE(this.unary);
        },
      },
      { ALT: () => this.SUBRULE(this.primary) },
    ]);
  });

  /** Each level's alternatives, built once: Chevrotain runs a rule's body on every parse. */
  private readonly operatorAlts = new Map<readonly (InfixOp | PrefixOp)[], IOrAlt<unknown>[]>();

  /** One of a level's operators (syntax/operators.ts), labelled `operator` for build-ast. */
  private operator(ops: readonly (InfixOp | PrefixOp)[], idx = 1): void {
    let alts = this.operatorAlts.get(ops);
    if (!alts) {
      alts = ops.map((op) => ({ ALT: () => this.CONSUME(T.tokenOf(op), { LABEL: "operator" }) }));
      this.operatorAlts.set(ops, alts);
    }
    this.or(idx, alts);
  }

  primary = this.RULE("primary", () => {
    this.OR([
      { ALT: () => this.CONSUME(T.NumberLiteral) },
      { ALT: () => this.CONSUME(T.DurationLiteral) },
      { ALT: () => this.CONSUME(T.StringLiteral) },
      { ALT: () => this.CONSUME(T.True) },
      { ALT: () => this.CONSUME(T.False) },
      { ALT: () => this.CONSUME(T.Now) },
      {
        ALT: () => {
          this.CONSUME(T.Identifier);
          this.OPTION(() => {
            this.CONSUME(T.LParen);
            this.MANY_SEP({ SEP: T.Comma, DEF: () => this.SUBRULE(this.expression, { LABEL: "argument" }) });
            this.CONSUME(T.RParen);
          });
        },
      },
      {
        ALT: () => {
          this.CONSUME2(T.LParen, { LABEL: "open" });
          this.SUBRULE2(this.expression, { LABEL: "inner" });
          this.CONSUME2(T.RParen, { LABEL: "close" });
        },
      },
    ]);
  });
}

let parser: WritParser | undefined;

/** The parser is built once per process: Chevrotain's self-analysis is the expensive part. */
export function getParser(): WritParser {
  parser ??= new WritParser();
  return parser;
}

/** A syntax error: the token it is about, the message, and the hints of a habit that explains it (none otherwise). */
export interface ParseError {
  readonly token: IToken;
  readonly message: string;
  readonly notes: readonly string[];
}

export interface ParseResult {
  readonly cst: CstNode;
  readonly errors: readonly ParseError[];
}

export function parseTokens(tokens: IToken[]): ParseResult {
  const p = getParser();
  p.input = tokens;
  const cst = p.policyFile();
  return { cst, errors: p.errors.map(parseError) };
}

function parseError(e: IRecognitionException): ParseError {
  const hint = habitHints.get(e.token)?.get(e.message);
  return { token: e.token, message: e.message, notes: hint === undefined ? [] : [hint] };
}
