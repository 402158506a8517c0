import { placesOf, unitsOf } from "@writ/runtime";
import { NumberSet } from "../analysis/number-set.js";
import { Rational, boundNumber } from "../analysis/rational.js";

/**
 * How a variable's numbers are held: doubles (`whole` false: `number`), or whole numbers each standing for
 * `n / 10^scale`: integers, lengths and instants (milliseconds) at scale 0, a `decimal(S)` in units of 10^-S, so
 * that `amount > 0.29` and `amount >= 0.30` are the same set of a `decimal(2)`, and emptiness is exact.
 */
export interface NumberDomain {
  readonly whole: boolean;
  readonly scale: number;
}

export const DOUBLES: NumberDomain = { whole: false, scale: 0 };
export const INTEGERS: NumberDomain = { whole: true, scale: 0 };

/** Whether numbers are held in units of a decimal (scale above 0), so a value is not its own representation. */
export function inUnits(domain: NumberDomain): boolean {
  return domain.whole && domain.scale > 0;
}

/** The number a held value stands for, as a signal carries it (the double of the decimal `n / 10^scale`). */
export function valueOfUnits(domain: NumberDomain, n: number): number {
  // Both are exact doubles (n within 2^53, 10^scale up to 10^22) and IEEE division rounds correctly.
  return inUnits(domain) ? n / 10 ** domain.scale : n;
}

/** A signal's number as the domain holds it, or null when it is not one (more places than the scale). */
export function unitsOfValue(domain: NumberDomain, v: number): number | null {
  if (!domain.whole) return v;
  if (placesOf(v) > domain.scale) return null;
  const units = unitsOf(v, domain.scale);
  return units === null ? null : boundNumber(units);
}

/** The exact value a held number stands for (for a double, the decimal its shortest form writes: see Rational). */
function exact(domain: NumberDomain, n: number): Rational {
  return inUnits(domain) ? Rational.of(BigInt(n), 10n ** BigInt(domain.scale)) : Rational.fromDecimal(n);
}

/**
 * The numbers of `set` (held as `from`) that `to` can hold, held as `to`: the spans' ends moved inwards to the
 * nearest value of `to` (exact, with rationals). Every value of `to` within a span of a schema's set is accepted by
 * that schema, so this is the common set two declarations accept.
 */
export function convertSet(set: NumberSet, from: NumberDomain, to: NumberDomain): NumberSet {
  if (from.whole === to.whole && from.scale === to.scale) return set;
  if (!to.whole) return set.intersect(NumberSet.span(false, -Infinity, Infinity));
  const unit = 10n ** BigInt(to.scale);
  const scaled = (n: number): Rational => exact(from, n).mul(Rational.of(unit));
  return set.spans.reduce(
    (acc, s) =>
      acc.union(
        NumberSet.span(
          true,
          Number.isFinite(s.lo) ? boundNumber(scaled(s.lo).ceil()) : s.lo,
          Number.isFinite(s.hi) ? boundNumber(scaled(s.hi).floor()) : s.hi,
        ),
      ),
    NumberSet.empty(true),
  );
}

/** The domain two declarations' common values are held in: whole at the smaller scale when either is whole. */
export function commonNumberDomain(a: NumberDomain, b: NumberDomain): NumberDomain {
  if (!a.whole) return b;
  if (!b.whole) return a;
  return a.scale <= b.scale ? a : b;
}
