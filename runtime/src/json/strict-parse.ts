/**
 * Strict RFC 8259 parser for untrusted JSON that is about to be canonicalized (RFC 8785) and signed. JSON.parse is too
 * lenient for that (it keeps the last of duplicate keys, accepts lone surrogates and rounds unsafe integers), so two
 * different inputs could become the same signed object; no maintained npm library refuses all of these in one pass
 * and reports positions.
 *
 * Its decisions (docs/runtime.md, "Strict JSON"): `-0` is read as 0 (the signed bytes could not carry the sign); a
 * number beyond Number.MAX_SAFE_INTEGER, or that overflows or underflows, is refused however it is written; a fraction
 * whose digits a double cannot carry is returned as the double and recorded with its text (lossy-numbers.ts); a
 * `__proto__` key becomes an own data property.
 */
import { StrictJsonError } from "../errors.js";
import { parseCommonJson } from "./common-json.js";
import { carriesExactly } from "./exact-number.js";
import { recordLossyNumber } from "./lossy-numbers.js";

export interface StrictParseOptions {
  /** Deepest nesting of arrays and objects accepted; a top-level `[]` is depth 1. Default 64. */
  maxDepth?: number;
}

const DEFAULT_MAX_DEPTH = 64;
// The parser recurses once per nesting level; this bound keeps every accepted setting far from
// V8's stack limit, so deep input always ends in a StrictJsonError, never a RangeError.
const MAX_DEPTH_LIMIT = 1000;
// Longest piece of user input quoted in an error message, in UTF-16 code units.
const MAX_QUOTED = 40;

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const SLASH = 0x2f;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const UPPER_E = 0x45;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const LOWER_E = 0x65;
const LOWER_U = 0x75;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const BOM = 0xfeff;

export function parseStrictJson(text: string, options?: StrictParseOptions): unknown {
  const maxDepth = options?.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!Number.isInteger(maxDepth) || maxDepth < 0 || maxDepth > MAX_DEPTH_LIMIT) {
    throw new RangeError(`maxDepth must be an integer from 0 to ${MAX_DEPTH_LIMIT}, got ${maxDepth}`);
  }
  return (parseCommonJson(text, maxDepth) ?? { value: parseByGrammar(text, maxDepth) }).value;
}

/** The strict parser itself, without the fast path (common-json.ts): what decides every text the fast path leaves. */
export function parseByGrammar(text: string, maxDepth: number): unknown {
  return new Parser(text, maxDepth).parseDocument();
}

class Parser {
  private readonly text: string;
  private readonly maxDepth: number;
  private pos = 0;
  /** The text of the number just parsed when a double does not carry it; its container records it. */
  private lossy: string | null = null;

  constructor(text: string, maxDepth: number) {
    this.text = text;
    this.maxDepth = maxDepth;
  }

  parseDocument(): unknown {
    if (this.text.charCodeAt(0) === BOM) throw this.error("byte order mark is not allowed", 0);
    this.skipWhitespace();
    if (this.pos === this.text.length) throw this.error("empty input", this.pos);
    const value = this.parseValue(0);
    this.skipWhitespace();
    if (this.pos < this.text.length) throw this.error(`unexpected ${this.found()} after the value`, this.pos);
    return value;
  }

  /** `depth` is the number of arrays and objects around the value. */
  private parseValue(depth: number): unknown {
    const c = this.text.charCodeAt(this.pos);
    if (c === QUOTE) return this.parseString();
    if (c === OPEN_BRACE) return this.parseObject(depth);
    if (c === OPEN_BRACKET) return this.parseArray(depth);
    if (c === MINUS || isDigit(c)) return this.parseNumber();
    if (isLetter(c)) return this.parseLiteral();
    throw this.unexpected("a value");
  }

  private parseObject(depth: number): Record<string, unknown> {
    this.checkDepth(depth);
    const text = this.text;
    const object: Record<string, unknown> = {};
    this.pos++;
    this.skipWhitespace();
    if (text.charCodeAt(this.pos) === CLOSE_BRACE) {
      this.pos++;
      return object;
    }
    for (;;) {
      const keyStart = this.pos;
      if (text.charCodeAt(keyStart) !== QUOTE) throw this.unexpected("a string key");
      const key = this.parseString();
      // Own properties only: a key such as `toString` must not collide with Object.prototype.
      if (Object.hasOwn(object, key)) throw this.error(`duplicate key \`${quote(key)}\``, keyStart);
      this.skipWhitespace();
      if (text.charCodeAt(this.pos) !== COLON) throw this.unexpected("`:` after the key");
      this.pos++;
      this.skipWhitespace();
      const value = this.parseValue(depth + 1);
      this.keepLossy(object, key);
      if (key === "__proto__") {
        // Assignment would call the Object.prototype.__proto__ setter and swap the prototype.
        Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
      } else {
        object[key] = value;
      }
      this.skipWhitespace();
      const c = text.charCodeAt(this.pos);
      if (c === CLOSE_BRACE) {
        this.pos++;
        return object;
      }
      if (c !== COMMA) throw this.unexpected("`,` or `}`");
      const comma = this.pos++;
      this.skipWhitespace();
      if (text.charCodeAt(this.pos) === CLOSE_BRACE) throw this.error("trailing comma in object", comma);
    }
  }

  private parseArray(depth: number): unknown[] {
    this.checkDepth(depth);
    const text = this.text;
    const array: unknown[] = [];
    this.pos++;
    this.skipWhitespace();
    if (text.charCodeAt(this.pos) === CLOSE_BRACKET) {
      this.pos++;
      return array;
    }
    for (;;) {
      array.push(this.parseValue(depth + 1));
      this.keepLossy(array, String(array.length - 1));
      this.skipWhitespace();
      const c = text.charCodeAt(this.pos);
      if (c === CLOSE_BRACKET) {
        this.pos++;
        return array;
      }
      if (c !== COMMA) throw this.unexpected("`,` or `]`");
      const comma = this.pos++;
      this.skipWhitespace();
      if (text.charCodeAt(this.pos) === CLOSE_BRACKET) throw this.error("trailing comma in array", comma);
    }
  }

  private keepLossy(container: object, key: string): void {
    if (this.lossy === null) return;
    recordLossyNumber(container, key, this.lossy);
    this.lossy = null;
  }

  private checkDepth(depth: number): void {
    if (depth === this.maxDepth) {
      throw this.error(`nesting deeper than the maximum depth of ${this.maxDepth}`, this.pos);
    }
  }

  private parseString(): string {
    const text = this.text;
    const length = text.length;
    const start = this.pos;
    let pos = start + 1;
    // Unescaped runs are copied with one slice each; most strings are a single run.
    let runStart = pos;
    let result = "";
    for (;;) {
      if (pos >= length) throw this.error("unterminated string", start);
      const c = text.charCodeAt(pos);
      if (c === QUOTE) {
        this.pos = pos + 1;
        return result + text.slice(runStart, pos);
      }
      if (c === BACKSLASH) {
        result += text.slice(runStart, pos) + this.parseEscape(pos, start);
        pos = runStart = this.pos;
      } else if (c < SPACE) {
        throw this.error(`unescaped control character \`${quote(text.charAt(pos))}\` in string`, pos);
      } else if (c >= 0xd800 && c <= 0xdfff) {
        // Input that arrived as UTF-8 cannot hold an unpaired surrogate; one here was made in JS.
        if (c > 0xdbff || !isLowSurrogate(text.charCodeAt(pos + 1))) {
          throw this.error(`lone surrogate \`${quote(text.charAt(pos))}\` in string`, pos);
        }
        pos += 2;
      } else {
        pos++;
      }
    }
  }

  /** Decodes the escape whose backslash is at `pos` and leaves `this.pos` after it. */
  private parseEscape(pos: number, stringStart: number): string {
    const text = this.text;
    const c = text.charCodeAt(pos + 1);
    this.pos = pos + 2;
    switch (c) {
      case QUOTE:
        return '"';
      case BACKSLASH:
        return "\\";
      case SLASH:
        return "/";
      case 0x62:
        return "\b";
      case 0x66:
        return "\f";
      case 0x6e:
        return "\n";
      case 0x72:
        return "\r";
      case 0x74:
        return "\t";
      case LOWER_U:
        break;
      default:
        if (pos + 1 >= text.length) throw this.error("unterminated string", stringStart);
        throw this.error(`invalid escape \`${quote(text.slice(pos, pos + 2))}\` in string`, pos);
    }
    const unit = readHex4(text, pos + 2);
    if (unit < 0) throw this.error(`invalid unicode escape \`${quote(text.slice(pos, pos + 6))}\``, pos);
    if (unit < 0xd800 || unit > 0xdfff) {
      this.pos = pos + 6;
      return String.fromCharCode(unit);
    }
    // A surrogate is only meaningful as an escaped high half immediately followed by an escaped low half.
    if (unit <= 0xdbff && text.charCodeAt(pos + 6) === BACKSLASH && text.charCodeAt(pos + 7) === LOWER_U) {
      const low = readHex4(text, pos + 8);
      if (isLowSurrogate(low)) {
        this.pos = pos + 12;
        return String.fromCharCode(unit, low);
      }
    }
    throw this.error(`lone surrogate \`${quote(text.slice(pos, pos + 6))}\` in string`, pos);
  }

  private parseNumber(): number {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    let c = text.charCodeAt(pos);
    if (c === MINUS) c = text.charCodeAt(++pos);
    if (c === ZERO) {
      c = text.charCodeAt(++pos);
      if (isDigit(c)) {
        while (isDigit(text.charCodeAt(pos))) pos++;
        throw this.error(`leading zero in number \`${quote(text.slice(start, pos))}\``, start);
      }
    } else if (isDigit(c)) {
      do c = text.charCodeAt(++pos);
      while (isDigit(c));
    } else {
      throw this.error("expected a digit after `-`", pos);
    }
    if (c === DOT) {
      c = text.charCodeAt(++pos);
      if (!isDigit(c)) throw this.error("expected a digit after the decimal point", pos);
      do c = text.charCodeAt(++pos);
      while (isDigit(c));
    }
    if (c === LOWER_E || c === UPPER_E) {
      c = text.charCodeAt(++pos);
      if (c === PLUS || c === MINUS) c = text.charCodeAt(++pos);
      if (!isDigit(c)) throw this.error("expected a digit in the exponent", pos);
      do c = text.charCodeAt(++pos);
      while (isDigit(c));
    }
    this.pos = pos;
    // The grammar above is a subset of what Number() accepts, and Number() rounds correctly.
    const literal = text.slice(start, pos);
    const value = Number(literal);
    if (value > Number.MAX_SAFE_INTEGER || value < -Number.MAX_SAFE_INTEGER) {
      const problem = Number.isFinite(value) ? "exceeds the safe magnitude 2^53 - 1" : "overflows to infinity";
      throw this.error(`unsafe number \`${quote(literal)}\` ${problem}`, start);
    }
    if (value === 0) {
      if (hasNonZeroMantissa(literal)) throw this.error(`unsafe number \`${quote(literal)}\` underflows to zero`, start);
      return 0; // folds -0 into 0, see the header
    }
    if (!carriesExactly(literal, value)) this.lossy = literal;
    return value;
  }

  private parseLiteral(): boolean | null {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    while (isLetter(text.charCodeAt(pos))) pos++;
    // Reading the whole word reports `nul`, `NaN`, `Infinity` or `truex` as one bad literal.
    const word = text.slice(start, pos);
    this.pos = pos;
    if (word === "true") return true;
    if (word === "false") return false;
    if (word === "null") return null;
    throw this.error(`invalid literal \`${quote(word)}\``, start);
  }

  private skipWhitespace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c !== SPACE && c !== LF && c !== CR && c !== TAB) break;
      pos++;
    }
    this.pos = pos;
  }

  /** An error at `this.pos` naming what was found there and what the grammar needed. */
  private unexpected(expected: string): StrictJsonError {
    return this.error(`unexpected ${this.found()}, expected ${expected}`, this.pos);
  }

  private found(): string {
    const codePoint = this.text.codePointAt(this.pos);
    return codePoint === undefined ? "end of input" : `character \`${quote(String.fromCodePoint(codePoint))}\``;
  }

  private error(message: string, offset: number): StrictJsonError {
    // Positions are worked out only on failure, so the hot path never tracks lines.
    const text = this.text;
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < offset; i++) {
      const c = text.charCodeAt(i);
      // CR LF is one line break, so its CR is skipped and its LF counts.
      if (c === LF || (c === CR && text.charCodeAt(i + 1) !== LF)) {
        line++;
        lineStart = i + 1;
      }
    }
    return new StrictJsonError(message, line, offset - lineStart + 1);
  }
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

function isLetter(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** The value of four hex digits at `at`, or a negative number if any of them is missing or not hex. */
function readHex4(text: string, at: number): number {
  // A -1 from any digit sets the sign bit of the combined value, so one check covers all four.
  return (
    (hexDigit(text.charCodeAt(at)) << 12) |
    (hexDigit(text.charCodeAt(at + 1)) << 8) |
    (hexDigit(text.charCodeAt(at + 2)) << 4) |
    hexDigit(text.charCodeAt(at + 3))
  );
}

function hexDigit(c: number): number {
  if (c >= ZERO && c <= NINE) return c - ZERO;
  const lower = c | 0x20; // ASCII letters differ from their lower case in this bit only
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** Whether a number literal has a nonzero digit before its exponent, i.e. is not a spelling of zero. */
function hasNonZeroMantissa(literal: string): boolean {
  for (let i = 0; i < literal.length; i++) {
    const c = literal.charCodeAt(i);
    if (c === LOWER_E || c === UPPER_E) return false;
    if (c > ZERO && c <= NINE) return true;
  }
  return false;
}

/**
 * User input as it may appear between backticks in a message: bounded in length, with invisible
 * and non-printing characters (controls, format and bidi marks, separators other than the space,
 * lone surrogates) and backticks written as `\uXXXX`, so a message stays on one line, shows what
 * was really sent, and cannot have its quoting forged.
 */
function quote(input: string): string {
  const bounded = input.length > MAX_QUOTED ? `${input.slice(0, MAX_QUOTED)}...` : input;
  return bounded.replace(/(?! )[\p{C}\p{Z}`]/gu, (c) => {
    let escaped = "";
    for (let i = 0; i < c.length; i++) escaped += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
    return escaped;
  });
}
