/**
 * A strict JSON parser (RFC 8259 plus the refusals of docs/signing.md): duplicate member names, lone surrogates,
 * non-finite numbers and integers beyond 2^53 - 1 are errors, not something to normalize. `JSON.parse` silently
 * keeps the last duplicate, accepts `"\ud800"` and turns `1e400` into Infinity, so a signature "verified" over its
 * output would be over a rewrite of what the server sent.
 *
 * writ's runtime has such a parser; the suite does not import it: it imports no writ package (README.md, "Development"),
 * so that a bug in writ's own parser cannot hide the same bug in the implementation under test.
 */

export class StrictJsonError extends Error {
  override readonly name = "StrictJsonError";
  constructor(
    message: string,
    /** Zero-based offset into the text (UTF-16 code units). */
    readonly offset: number,
  ) {
    super(message);
  }
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

const MAX_DEPTH = 512;

/** Line and column (both from 1) of `offset` in `text`. */
function position(text: string, offset: number): string {
  let line = 1;
  let column = 1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      column = 1;
    } else {
      column++;
    }
  }
  return `line ${line} column ${column}`;
}

class Parser {
  #at = 0;

  constructor(readonly text: string) {}

  fail(message: string, at = this.#at): never {
    throw new StrictJsonError(`${message} at ${position(this.text, at)}`, at);
  }

  parseDocument(): JsonValue {
    if (this.text.startsWith("\uFEFF")) this.fail("byte order mark is not allowed");
    this.skipBlanks();
    if (this.#at >= this.text.length) this.fail("empty input");
    const value = this.value(0);
    this.skipBlanks();
    if (this.#at < this.text.length) this.fail(`unexpected character \`${this.text[this.#at]}\` after the value`);
    return value;
  }

  skipBlanks(): void {
    while (this.#at < this.text.length) {
      const c = this.text[this.#at];
      if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r") return;
      this.#at++;
    }
  }

  value(depth: number): JsonValue {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    const c = this.text[this.#at];
    if (c === "{") return this.object(depth);
    if (c === "[") return this.array(depth);
    if (c === '"') return this.string();
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.number();
    for (const [literal, value] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (this.text.startsWith(literal, this.#at)) {
        this.#at += literal.length;
        return value;
      }
    }
    if (c === undefined) this.fail("unexpected end of input, expected a value");
    const word = /^[A-Za-z]+/.exec(this.text.slice(this.#at))?.[0];
    this.fail(word === undefined ? `unexpected character \`${c}\`, expected a value` : `invalid literal \`${word}\``);
  }

  object(depth: number): JsonValue {
    this.#at++;
    const out: { [key: string]: JsonValue } = {};
    const seen = new Set<string>();
    this.skipBlanks();
    if (this.text[this.#at] === "}") {
      this.#at++;
      return out;
    }
    for (;;) {
      this.skipBlanks();
      if (this.text[this.#at] !== '"') {
        if (this.#at >= this.text.length) this.fail("unexpected end of input, expected a string key");
        if (this.text[this.#at] === "}") this.fail("trailing comma in object");
        this.fail(`unexpected character \`${this.text[this.#at]}\`, expected a string key`);
      }
      const keyAt = this.#at;
      const key = this.string();
      if (seen.has(key)) this.fail(`duplicate key \`${key}\``, keyAt);
      seen.add(key);
      this.skipBlanks();
      if (this.text[this.#at] !== ":") this.fail("expected `:` after the key");
      this.#at++;
      this.skipBlanks();
      // defineProperty: a member named `__proto__` is data, not the prototype.
      Object.defineProperty(out, key, { value: this.value(depth + 1), enumerable: true, writable: true, configurable: true });
      this.skipBlanks();
      const c = this.text[this.#at];
      this.#at++;
      if (c === "}") return out;
      if (c !== ",")
        this.fail(c === undefined ? "unexpected end of input in object" : `unexpected character \`${c}\` in object`, this.#at - 1);
    }
  }

  array(depth: number): JsonValue {
    this.#at++;
    const out: JsonValue[] = [];
    this.skipBlanks();
    if (this.text[this.#at] === "]") {
      this.#at++;
      return out;
    }
    for (;;) {
      this.skipBlanks();
      if (this.text[this.#at] === "]") this.fail("trailing comma in array");
      if (this.#at >= this.text.length) this.fail("unexpected end of input in array");
      out.push(this.value(depth + 1));
      this.skipBlanks();
      const c = this.text[this.#at];
      this.#at++;
      if (c === "]") return out;
      if (c !== ",")
        this.fail(c === undefined ? "unexpected end of input in array" : `unexpected character \`${c}\` in array`, this.#at - 1);
    }
  }

  string(): string {
    const start = this.#at;
    this.#at++;
    let out = "";
    for (;;) {
      const c = this.text[this.#at];
      if (c === undefined) this.fail("unterminated string", start);
      if (c === '"') {
        this.#at++;
        break;
      }
      if (c < " ") this.fail("control character in string");
      if (c === "\\") {
        out += this.escape();
        continue;
      }
      out += c;
      this.#at++;
    }
    // A lone surrogate, escaped or raw, is not a Unicode string: refused, never replaced.
    for (let i = 0; i < out.length; i++) {
      const unit = out.charCodeAt(i);
      if (unit >= 0xd800 && unit <= 0xdbff) {
        const next = out.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          i++;
          continue;
        }
      }
      if (unit >= 0xd800 && unit <= 0xdfff) this.fail(`lone surrogate \`\\u${unit.toString(16).padStart(4, "0")}\` in string`, start);
    }
    return out;
  }

  escape(): string {
    const c = this.text[this.#at + 1];
    const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
    if (c !== undefined && Object.hasOwn(simple, c)) {
      this.#at += 2;
      return simple[c]!;
    }
    if (c === "u") {
      const hex = this.text.slice(this.#at + 2, this.#at + 6);
      if (!/^[0-9A-Fa-f]{4}$/.test(hex)) this.fail("invalid \\u escape");
      this.#at += 6;
      return String.fromCharCode(parseInt(hex, 16));
    }
    this.fail("invalid escape in string");
  }

  number(): number {
    const match = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(this.text.slice(this.#at));
    if (match === null) this.fail("invalid number");
    const literal = match[0];
    const value = Number(literal);
    if (!Number.isFinite(value)) this.fail(`unsafe number \`${literal}\` overflows to infinity`);
    // Every double above 2^53 - 1 is an integer standing for many decimal integers: `1e300` is as ambiguous as
    // `9007199254740993`. A literal that underflows to zero has lost its value the same way.
    if (Math.abs(value) > Number.MAX_SAFE_INTEGER) this.fail(`unsafe number \`${literal}\` exceeds the safe magnitude 2^53 - 1`);
    if (value === 0 && /[1-9]/.test(literal.split(/[eE]/)[0]!)) this.fail(`unsafe number \`${literal}\` underflows to zero`);
    this.#at += literal.length;
    return value;
  }
}

/** @throws StrictJsonError naming what is wrong and where (line and column). */
export function parseStrictJson(text: string): JsonValue {
  return new Parser(text).parseDocument();
}

/**
 * Bytes as UTF-8 text, refusing malformed UTF-8 (a replacement character would be a rewrite of what was sent).
 * @throws StrictJsonError
 */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new StrictJsonError("body is not valid UTF-8", 0);
  }
}
