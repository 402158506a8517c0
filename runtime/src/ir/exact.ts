/**
 * Exact decimals (docs/language.md "Decimals"): a value is a bigint of units at a fixed number of places. A JSON number
 * stands for the decimal its shortest round-trip form writes (`String(n)`): the strict parser and signal validation
 * refuse every number whose text says otherwise, so that form is what the client sent.
 */

/** The magnitude no number in writ exceeds, given or computed: the strict JSON parser's range. */
export const MAX_MAGNITUDE = Number.MAX_SAFE_INTEGER;
/** `decimal(S)` takes S from 0 to MAX_DECLARED_PLACES. */
export const MAX_DECLARED_PLACES = 18;

const POWERS: bigint[] = [1n];
/** 10^k as a bigint. */
export function pow10(k: number): bigint {
  for (let i = POWERS.length; i <= k; i++) POWERS.push(POWERS[i - 1]! * 10n);
  return POWERS[k]!;
}

/** Powers of ten that doubles hold exactly. */
const DOUBLE_POWERS = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** Decimals with at most this many significant digits each have a double of their own (DBL_DIG). */
const DISTINCT_BELOW = 1e15;

/** The digits and exponent of a number's shortest form: `digits × 10^exponent`, `digits` without a sign. */
function shortestForm(n: number): { readonly negative: boolean; readonly digits: string; readonly exponent: number } {
  const text = String(n);
  const negative = text.startsWith("-");
  const body = negative ? text.slice(1) : text;
  const e = body.indexOf("e");
  const mantissa = e === -1 ? body : body.slice(0, e);
  const dot = mantissa.indexOf(".");
  const digits = dot === -1 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  const places = dot === -1 ? 0 : mantissa.length - dot - 1;
  return { negative, digits, exponent: (e === -1 ? 0 : Number(body.slice(e + 1))) - places };
}

/** How many decimal places the decimal a number stands for has: 0 for a whole number, 2 for 1000.1 + 0.01's 1000.11. */
export function placesOf(n: number): number {
  const { digits, exponent } = shortestForm(n);
  let trailing = 0;
  while (trailing < digits.length - 1 && digits.charCodeAt(digits.length - 1 - trailing) === 0x30) trailing++;
  return Math.max(0, -(exponent + trailing));
}

/**
 * The units at `scale` places of the decimal `n` stands for, or null when it has more places than `scale`.
 * Fast path: when the units are below 10^15 they are `round(n × 10^scale)`, provably, and dividing back gives `n`
 * exactly when the decimal has at most `scale` places (two decimals of at most 15 digits never share a double).
 */
export function unitsOf(n: number, scale: number): bigint | null {
  if (scale < DOUBLE_POWERS.length) {
    const power = DOUBLE_POWERS[scale]!;
    const scaled = n * power;
    if (Math.abs(scaled) < DISTINCT_BELOW) {
      const units = Math.round(scaled);
      return units / power === n ? BigInt(units) : null;
    }
  }
  const { negative, digits, exponent } = shortestForm(n);
  const shift = exponent + scale;
  let units: bigint;
  if (shift >= 0) units = BigInt(digits) * pow10(shift);
  else {
    const kept = digits.length + shift;
    if (kept < 0 ? /[1-9]/.test(digits) : /[1-9]/.test(digits.slice(Math.max(kept, 0)))) return null;
    units = kept <= 0 ? 0n : BigInt(digits.slice(0, kept));
  }
  return negative ? -units : units;
}

/** `units` at `from` places, at `to` places (`to >= from`). */
export function rescale(units: bigint, from: number, to: number): bigint {
  return to === from ? units : units * pow10(to - from);
}

/** Whether `units` at `scale` places lies within ±MAX_MAGNITUDE. */
export function withinMagnitude(units: bigint, scale: number): boolean {
  const limit = BigInt(MAX_MAGNITUDE) * pow10(scale);
  return units <= limit && units >= -limit;
}

/** The decimal as text with exactly `scale` places: `decimalText(100030n, 2)` is `1000.30`. */
export function decimalText(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const text = scale === 0 ? whole : `${whole}.${digits.slice(digits.length - scale)}`;
  return negative ? `-${text}` : text;
}

/** The double nearest to the decimal (for tools that want a JSON number beside the exact text). */
export function nearestNumber(units: bigint, scale: number): number {
  return Number(decimalText(units, scale));
}
