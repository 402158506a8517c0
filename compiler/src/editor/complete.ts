import type { IToken, TokenType } from "chevrotain";
import { isCalendarOp, offsetText } from "@writ/runtime";
import { printConstValue, printSignal } from "../fmt/print-expr.js";
import { getParser } from "../syntax/grammar.js";
import { allTokens, type Keyword } from "../syntax/tokens.js";
import { tokenEnd, type SourceCheck } from "./check.js";
import { docComment } from "./describe.js";
import { BUILTIN_INFO, KEYWORD_INFO, keywordOf } from "./lexicon.js";
import { offsetOf, tzdataVersion, zoneNames } from "../zones/tz.js";

export interface Completion {
  readonly label: string;
  readonly kind: "signal" | "constant" | "function" | "keyword" | "zone";
  /** A short line beside the label: a signal's type, a constant's value, a function's signature. */
  readonly detail: string;
  readonly doc: string | null;
  /** The text it replaces, as offsets (end exclusive), where that is more than the word at the cursor: a zone's whole name typed. */
  readonly replaces?: { readonly start: number; readonly end: number };
}

/**
 * The signals and constants an editor offers. Taken from the last text that parsed, since the text being
 * typed often does not (`rule r when amo` is a syntax error until the rule is finished).
 */
export interface NameCatalogue {
  readonly signals: readonly Completion[];
  readonly constants: readonly Completion[];
  /** The constants that are not lists: the ones a list may hold. */
  readonly scalarConstants: readonly Completion[];
}

export function namesOf(check: SourceCheck): NameCatalogue | null {
  const ast = check.ast;
  if (!ast) return null;
  const doc = (span: { start: { offset: number }; end: { offset: number } }): string | null =>
    docComment(check, span.start.offset, span.end.offset);
  const constants = ast.consts.map((c) => ({
    completion: {
      label: c.name.name,
      kind: "constant" as const,
      detail: `const ${c.name.name} = ${printConstValue(c.value)}`,
      doc: doc(c.span),
    },
    scalar: c.value.kind === "scalar",
  }));
  return {
    signals: ast.signals.map((s) => ({ label: s.name.name, kind: "signal", detail: printSignal(s), doc: doc(s.span) })),
    constants: constants.map((c) => c.completion),
    scalarConstants: constants.filter((c) => c.scalar).map((c) => c.completion),
  };
}

/** The grammar rule each top-level section starts, for completing inside a section when an earlier one is broken. */
const SECTION_RULES: ReadonlyMap<Keyword, { readonly rule: string; readonly next: readonly Keyword[] }> = new Map([
  ["governs", { rule: "governsClause", next: ["signals"] }],
  ["signals", { rule: "signalsBlock", next: ["const", "rule", "otherwise"] }],
  ["const", { rule: "constDecl", next: ["const", "rule", "otherwise"] }],
  ["rule", { rule: "ruleDecl", next: ["rule", "otherwise"] }],
  ["otherwise", { rule: "otherwiseDecl", next: [] }],
] as const);

/**
 * What may be typed at `offset`, from the grammar: the parser computes which tokens may follow the text
 * before the cursor; keywords among them are offered, and where a name may follow, the names that fit there
 * (signals and constants in a condition, scalar constants in a list, signals after `binding`).
 * Nothing is offered inside a string, comment or regular expression.
 */
export function completionsAt(check: SourceCheck, offset: number, names: NameCatalogue | null = namesOf(check)): Completion[] {
  const zone = zoneArgumentAt(check, offset);
  if (zone !== null) return zoneCompletions(zone, { start: offset - zone.length, end: offset });
  if (insideLiteral(check, offset)) return [];
  const before = check.tokens.filter((t) => tokenEnd(t) <= offset && !(tokenEnd(t) === offset && isWord(t)));
  const next = nextTokens(before);
  const out: Completion[] = [];
  const seen = new Set<string>();
  const add = (c: Completion): void => {
    if (!seen.has(c.label)) out.push(c);
    seen.add(c.label);
  };
  for (const { type, ruleStack } of next) {
    if (type.name === "Identifier") {
      for (const c of namesFor(ruleStack[ruleStack.length - 1], names)) add(c);
    }
  }
  for (const { type } of next) {
    const keyword = keywordOf(type);
    // `now` is a value, a timestamp: its detail is its type, as a signal's is.
    if (keyword)
      add({ label: keyword, kind: "keyword", detail: keyword === "now" ? "timestamp" : "keyword", doc: KEYWORD_INFO[keyword].doc });
  }
  return out;
}

interface NextToken {
  readonly type: TokenType;
  readonly ruleStack: readonly string[];
}

function nextTokens(before: IToken[]): NextToken[] {
  const parser = getParser();
  const whole = parser.computeContentAssist("policyFile", before);
  if (whole.length > 0) return whole.map((p) => ({ type: p.nextTokenType, ruleStack: p.ruleStack }));
  // The text before the cursor does not parse as a whole: complete within the section the cursor is in.
  for (let i = before.length - 1; i >= 0; i--) {
    const keyword = keywordOf(before[i]!.tokenType);
    const section = keyword && SECTION_RULES.get(keyword);
    if (!section) continue;
    const within = parser.computeContentAssist(section.rule, before.slice(i));
    if (within.length > 0) return within.map((p) => ({ type: p.nextTokenType, ruleStack: p.ruleStack }));
    return section.next.map((k) => ({ type: keywordToken(k), ruleStack: [] }));
  }
  return [];
}

function namesFor(rule: string | undefined, names: NameCatalogue | null): Completion[] {
  if (!names) return [];
  switch (rule) {
    case "primary":
      return [
        ...names.signals,
        ...names.constants,
        ...Object.entries(BUILTIN_INFO).map(([name, info]) => ({
          label: name,
          kind: "function" as const,
          detail: info.signature,
          doc: info.doc,
        })),
      ];
    case "listLiteral":
      return [...names.scalarConstants];
    case "governsClause":
      return [...names.signals];
    default:
      return [];
  }
}

const isWord = (t: IToken): boolean => t.tokenType.name === "Identifier" || keywordOf(t.tokenType) !== null;

/** Strings, regular expressions and comments, and the unterminated strings and patterns the lexer reported (E102, E103). */
function insideLiteral(check: SourceCheck, offset: number): boolean {
  const inside = (start: number, end: number): boolean => start < offset && offset <= end;
  return (
    check.tokens.some(
      (t) => (t.tokenType.name === "StringLiteral" || t.tokenType.name === "RegexLiteral") && inside(t.startOffset, tokenEnd(t) - 1),
    ) ||
    // A comment runs to the end of its line, so a cursor at its end is still in it.
    check.comments.some((c) => inside(c.startOffset, tokenEnd(c))) ||
    check.diagnostics.some((d) => (d.code === "E102" || d.code === "E103") && inside(d.span.start.offset, d.span.end.offset))
  );
}

/**
 * The text typed so far of a calendar field's zone argument the cursor is in (`weekday(t, "Europe/Lo|`), or null: a
 * string, closed or left open (the lexer's E102), after `NAME(..., ` where NAME is a calendar field.
 */
function zoneArgumentAt(check: SourceCheck, offset: number): string | null {
  const inside = (start: number, end: number): boolean => start < offset && offset <= end;
  const token = check.tokens.find((t) => t.tokenType.name === "StringLiteral" && inside(t.startOffset, tokenEnd(t) - 1));
  const open = check.diagnostics.find((d) => d.code === "E102" && inside(d.span.start.offset, d.span.end.offset));
  const start = token?.startOffset ?? open?.span.start.offset;
  if (start === undefined) return null;
  const before = check.tokens.filter((t) => tokenEnd(t) <= start);
  if (before.at(-1)?.image !== ",") return null;
  let depth = 0;
  for (let j = before.length - 2; j > 0; j--) {
    const image = before[j]!.image;
    if (image === ")") depth++;
    else if (image === "(" && depth-- === 0) return isCalendarOp(before[j - 1]!.image) ? check.text.slice(start + 1, offset) : null;
  }
  return null;
}

/** The zones whose name holds what was typed (case aside), each with its offset now and the tzdata release. */
function zoneCompletions(typed: string, replaces: { start: number; end: number }): Completion[] {
  const wanted = typed.toLowerCase();
  const now = Math.floor(Date.now() / 1000);
  return zoneNames()
    .filter((z) => z.toLowerCase().includes(wanted))
    .map((z) => ({
      label: z,
      kind: "zone" as const,
      detail: `${offsetText(offsetOf(z, now))} now`,
      doc: `IANA time zone (tzdata ${tzdataVersion()}).`,
      replaces,
    }));
}

function keywordToken(k: Keyword): TokenType {
  return allTokens.find((t) => keywordOf(t) === k)!;
}
