import type { IToken } from "chevrotain";
import { DURATION_UNITS, ZONE_HORIZON, offsetText, type DurationUnit } from "@writ/runtime";
import { offsetOf, tzdataVersion, zoneRefusal } from "../zones/tz.js";
import { KEYWORDS } from "../syntax/tokens.js";
import { tokenEnd, type SourceCheck } from "./check.js";
import { describeDeclaration } from "./describe.js";
import { BUILTIN_INFO, KEYWORD_INFO, OPERATOR_INFO, keywordOf, tokenText, type Builtin } from "./lexicon.js";
import type { Occurrence, SymbolKind } from "./symbols.js";

/** A range of the text in UTF-16 code units, end exclusive (the unit of JavaScript strings and of LSP). */
export interface TextRange {
  readonly start: number;
  readonly end: number;
}

export interface HoverInfo {
  readonly range: TextRange;
  readonly markdown: string;
}

const rangeOf = (o: Occurrence): TextRange => ({ start: o.span.start.offset, end: o.span.end.offset });

/** What the name, keyword or operator at `offset` is. */
export function hoverAt(check: SourceCheck, offset: number): HoverInfo | null {
  const occurrence = check.symbols?.at(offset);
  if (occurrence) {
    if (occurrence.kind === "function") {
      const info = BUILTIN_INFO[occurrence.name as Builtin] as (typeof BUILTIN_INFO)[Builtin] | undefined;
      return info ? { range: rangeOf(occurrence), markdown: `\`\`\`writ\n${info.signature}\n\`\`\`\n\n${info.doc}` } : null;
    }
    const decl = check.symbols!.declaration(occurrence.kind, occurrence.name);
    return decl ? { range: rangeOf(occurrence), markdown: describeDeclaration(check, decl) } : null;
  }
  const token = tokenAt(check.tokens, offset);
  if (!token) return null;
  if (token.tokenType.name === "DurationLiteral") {
    return { range: { start: token.startOffset, end: tokenEnd(token) }, markdown: durationDoc(token.image) };
  }
  if (token.tokenType.name === "StringLiteral") {
    const doc = zoneDoc(token.image.slice(1, -1));
    return doc ? { range: { start: token.startOffset, end: tokenEnd(token) }, markdown: doc } : null;
  }
  const keyword = keywordOf(token.tokenType);
  const text = tokenText(token.tokenType);
  const doc = keyword ? KEYWORD_INFO[keyword].doc : text !== null ? OPERATOR_INFO[text]?.doc : undefined;
  return doc ? { range: { start: token.startOffset, end: tokenEnd(token) }, markdown: doc } : null;
}

/** Where the signal, constant or rule named at `offset` is declared. */
export function definitionAt(check: SourceCheck, offset: number): TextRange | null {
  const occurrence = check.symbols?.at(offset);
  if (!occurrence) return null;
  const decl = check.symbols!.declaration(occurrence.kind, occurrence.name);
  return decl ? { start: decl.decl.name.span.start.offset, end: decl.decl.name.span.end.offset } : null;
}

export type RenameTarget =
  | { readonly ok: true; readonly range: TextRange; readonly name: string; readonly kind: SymbolKind }
  | { readonly ok: false; readonly message: string };

/**
 * The signal, constant or rule a rename at `offset` would rename; null when there is no name there.
 * Built-in functions and undeclared names cannot be renamed; nor can anything while the policy does not parse.
 */
export function renameTargetAt(check: SourceCheck, offset: number): RenameTarget | null {
  if (!check.symbols) {
    const token = tokenAt(check.tokens, offset);
    return token?.tokenType.name === "Identifier" ? { ok: false, message: "the policy has syntax errors: fix them before renaming" } : null;
  }
  const o = check.symbols.at(offset);
  if (!o) return null;
  if (o.kind === "function") return { ok: false, message: `\`${o.name}\` is a built-in function and cannot be renamed` };
  if (o.kind === "unknown") return { ok: false, message: `\`${o.name}\` is not declared, so there is nothing to rename` };
  return { ok: true, range: rangeOf(o), name: o.name, kind: o.kind };
}

export interface TextEdit {
  readonly range: TextRange;
  readonly newText: string;
}

export type RenameResult = { readonly ok: true; readonly edits: readonly TextEdit[] } | { readonly ok: false; readonly message: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Renames the signal, constant or rule at `offset` everywhere the policy names it. Refuses a new name that is
 * not a name, is reserved, or is already taken in the namespace (signals and constants share one; rules have
 * their own), since the renamed policy would not compile.
 */
export function renameAt(check: SourceCheck, offset: number, newName: string): RenameResult {
  const target = renameTargetAt(check, offset);
  if (target === null) return { ok: false, message: "there is no signal, constant or rule name here" };
  if (!target.ok) return target;
  const refused = refuseName(check, target.kind, target.name, newName);
  if (refused) return { ok: false, message: refused };
  const edits = check.symbols!.occurrencesOf(target.kind, target.name).map((o) => ({ range: rangeOf(o), newText: newName }));
  return { ok: true, edits };
}

function refuseName(check: SourceCheck, kind: SymbolKind, oldName: string, newName: string): string | null {
  if (!NAME.test(newName)) {
    return `\`${newName}\` is not a name: names are ASCII letters, digits and \`_\`, and do not start with a digit`;
  }
  if ((KEYWORDS as readonly string[]).includes(newName)) return `\`${newName}\` is a reserved word and cannot be a name`;
  if (newName === oldName) return null;
  const symbols = check.symbols!;
  const taken = (kind === "rule" ? (["rule"] as const) : (["signal", "constant"] as const)).find((k) => symbols.declaration(k, newName));
  return taken ? `\`${newName}\` is already declared as a ${taken}` : null;
}

/** The token under `offset`, or the one ending just before it (a cursor right after a word is on it). */
export function tokenAt(tokens: readonly IToken[], offset: number): IToken | undefined {
  return tokens.find((t) => t.startOffset <= offset && offset < tokenEnd(t)) ?? tokens.find((t) => tokenEnd(t) === offset);
}

/** A duration literal's help: its fixed length in milliseconds, and what it adds to and compares with. */
/** A string that names a time zone (a calendar field's argument, a zone constant): its offset now and its tz release. */
function zoneDoc(name: string): string | null {
  if (!name.includes("/") && name !== "UTC") return null;
  if (zoneRefusal(name) !== null) return null;
  const [from, to] = ZONE_HORIZON.map((s) => new Date(s * 1000).toISOString().slice(0, 10));
  const now = offsetText(offsetOf(name, Math.floor(Date.now() / 1000)));
  return `time zone \`${name}\`: ${now} now (tzdata ${tzdataVersion()}). A calendar field in it reads the zone's clock; the bundle embeds its offsets from ${from} to ${to} (UTC), beyond which the field faults (EVAL-004).`;
}

function durationDoc(text: string): string {
  const unit = /(ms|[smhd])$/.exec(text)![1] as DurationUnit;
  const ms = Number(text.slice(0, -unit.length)) * DURATION_UNITS[unit];
  return `duration \`${text}\`: ${ms.toLocaleString("en-US")} ms (fixed lengths: \`d\` is 86,400,000 ms). Added to or subtracted from a timestamp it gives a timestamp (\`opened_at + ${text}\`); it compares with durations (\`b - a > ${text}\`).`;
}
