/**
 * Decodes a string literal (phase build-ast) with JSON's escapes. Raw control characters and lone surrogates are refused:
 * reasons end up in signed attestations, which must canonicalize (RFC 8785) without loss.
 */
export function decodeString(image: string): string | { message: string; at: number; length: number } {
  let out = "";
  const end = image.length - 1;
  for (let i = 1; i < end; i++) {
    const c = image[i]!;
    const code = c.charCodeAt(0);
    if (code < 0x20) return { message: "control characters must be written as escapes such as `\\t`", at: i, length: 1 };
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = image[i + 1] ?? "";
    const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
    if (e in simple) {
      out += simple[e];
      i++;
    } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(image.slice(i + 2, i + 6))) {
      out += String.fromCharCode(parseInt(image.slice(i + 2, i + 6), 16));
      i += 5;
    } else {
      return { message: `invalid escape \`\\${e}\`: use \\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX`, at: i, length: 2 };
    }
  }
  if (!out.isWellFormed()) return { message: "string contains a lone surrogate `\\uD800`-`\\uDFFF`", at: 0, length: image.length };
  return out;
}
