/**
 * Exact rational numbers on bigints, for the bounds `writ diff` computes with where the runtime is exact (integers,
 * decimals, instants): never a double, so a bound is the bound. Always in lowest terms, the denominator positive.
 */
export class Rational {
  private constructor(
    readonly num: bigint,
    readonly den: bigint,
  ) {}

  static readonly ZERO = new Rational(0n, 1n);
  static readonly ONE = new Rational(1n, 1n);

  static of(num: bigint, den = 1n): Rational {
    if (den === 0n) throw new RangeError("internal: a rational with denominator 0");
    if (den < 0n) [num, den] = [-num, -den];
    const g = gcd(num < 0n ? -num : num, den);
    return g === 1n ? new Rational(num, den) : new Rational(num / g, den / g);
  }

  /** The exact value of a finite double: its binary mantissa times a power of two. */
  static fromDouble(x: number): Rational {
    if (!Number.isFinite(x)) throw new RangeError(`internal: ${x} is not a finite number`);
    if (Number.isInteger(x) && Math.abs(x) <= Number.MAX_SAFE_INTEGER) return new Rational(BigInt(x), 1n);
    view.setFloat64(0, x);
    const bits = view.getBigUint64(0);
    const negative = bits >> 63n === 1n;
    const exponent = Number((bits >> 52n) & 0x7ffn);
    const fraction = bits & 0xfffffffffffffn;
    const mantissa = exponent === 0 ? fraction : fraction | (1n << 52n);
    const shift = (exponent === 0 ? 1 : exponent) - 1075;
    const signed = negative ? -mantissa : mantissa;
    return shift >= 0 ? Rational.of(signed << BigInt(shift)) : Rational.of(signed, 1n << BigInt(-shift));
  }

  /** The decimal a number's shortest form writes (`String(0.1)` is 0.1, not the double's binary value). */
  static fromDecimal(x: number): Rational {
    const text = String(x);
    const e = text.search(/e/i);
    const mantissa = e === -1 ? text : text.slice(0, e);
    const exponent = e === -1 ? 0 : Number(text.slice(e + 1));
    const dot = mantissa.indexOf(".");
    const digits = BigInt(dot === -1 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1));
    const places = (dot === -1 ? 0 : mantissa.length - dot - 1) - exponent;
    return places >= 0 ? Rational.of(digits, 10n ** BigInt(places)) : Rational.of(digits * 10n ** BigInt(-places));
  }

  add(o: Rational): Rational {
    return Rational.of(this.num * o.den + o.num * this.den, this.den * o.den);
  }

  sub(o: Rational): Rational {
    return this.add(o.neg());
  }

  neg(): Rational {
    return new Rational(-this.num, this.den);
  }

  mul(o: Rational): Rational {
    return Rational.of(this.num * o.num, this.den * o.den);
  }

  div(o: Rational): Rational {
    return Rational.of(this.num * o.den, this.den * o.num);
  }

  compare(o: Rational): -1 | 0 | 1 {
    const d = this.num * o.den - o.num * this.den;
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  }

  sign(): -1 | 0 | 1 {
    return this.num < 0n ? -1 : this.num > 0n ? 1 : 0;
  }

  floor(): bigint {
    const q = this.num / this.den;
    return this.num < 0n && q * this.den !== this.num ? q - 1n : q;
  }

  ceil(): bigint {
    return -this.neg().floor();
  }

  /** The decimal nearest it with 20 significant digits, as text a double is read from. */
  toDecimal(): string {
    const negative = this.num < 0n;
    const n = negative ? -this.num : this.num;
    const whole = n / this.den;
    const fraction = ((n % this.den) * 10n ** 20n) / this.den;
    return `${negative ? "-" : ""}${whole}.${fraction.toString().padStart(20, "0")}`;
  }

  toString(): string {
    return this.den === 1n ? String(this.num) : `${this.num}/${this.den}`;
  }
}

const view = new DataView(new ArrayBuffer(8));

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}

/** A bigint as a double where it is one exactly (|n| <= 2^53), else the infinity on its side: for span bounds. */
export function boundNumber(n: bigint): number {
  const limit = 2n ** 53n;
  return n > limit ? Infinity : n < -limit ? -Infinity : Number(n);
}
