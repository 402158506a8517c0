/**
 * Whether a JSON number's text survives being read as a double: the decimal it writes is the decimal the double's
 * shortest form (`String(n)`, what RFC 8785 writes) writes. `0.1` and `1000.10` do; `25000.000000000001` does not (it
 * reads as 25000), so a signed decision could not show what was sent. docs/language.md "Numbers" says where writ
 * refuses such a number.
 */

/** Texts of at most this many characters have at most 15 significant digits, which a double always carries. */
const ALWAYS_EXACT_LENGTH = 16;

export function carriesExactly(text: string, value: number): boolean {
  if (text.length <= ALWAYS_EXACT_LENGTH) return true;
  const written = decimalOf(text);
  const read = decimalOf(String(value));
  return (
    written.digits === read.digits && written.exponent === read.exponent && (written.digits === "" || written.negative === read.negative)
  );
}

/** A number's text as `±digits × 10^exponent` with no leading or trailing zero digit (`digits` empty for zero). */
function decimalOf(text: string): { readonly negative: boolean; readonly digits: string; readonly exponent: number } {
  const negative = text.charCodeAt(0) === 0x2d;
  const body = negative ? text.slice(1) : text;
  const e = body.search(/[eE]/);
  const mantissa = e === -1 ? body : body.slice(0, e);
  const dot = mantissa.indexOf(".");
  const whole = dot === -1 ? mantissa : mantissa.slice(0, dot);
  const fraction = dot === -1 ? "" : mantissa.slice(dot + 1);
  let digits = whole + fraction;
  let exponent = (e === -1 ? 0 : Number(body.slice(e + 1))) - fraction.length;
  let start = 0;
  while (start < digits.length && digits.charCodeAt(start) === 0x30) start++;
  let end = digits.length;
  while (end > start && digits.charCodeAt(end - 1) === 0x30) end--;
  exponent += digits.length - end;
  digits = digits.slice(start, end);
  return { negative, digits, exponent: digits === "" ? 0 : exponent };
}
