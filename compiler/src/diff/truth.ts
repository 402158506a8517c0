import { EvaluationFaultSignal, type Value } from "@writ/runtime";

type Operand = (signals: Readonly<Record<string, unknown>>) => Value;

/**
 * The values a condition can have, as a bit mask: Kleene's true, false and unknown, and a fault (docs/language.md
 * "Faults"), which only `and`'s false and `or`'s true absorb and which otherwise ends the evaluation at its rule.
 */
export const T = 1;
export const F = 2;
export const U = 4;
export const E = 8;
export type Mask = number;
export const EVERY: Mask = T | F | U | E;
/** The four values in the order a leaf's sets and a relabelling map list them. */
export const EACH = [T, F, U, E] as const;

/** The truth value of a computed condition. */
export function truthOf(v: Value): Mask {
  return v === true ? T : v === false ? F : U;
}

/** A condition's truth value for `signals`, computed as the runtime does: a fault is `E`. */
export function truthAt(evaluate: Operand, signals: Readonly<Record<string, unknown>>): Mask {
  try {
    return truthOf(evaluate(signals));
  } catch (e) {
    if (e instanceof EvaluationFaultSignal) return E;
    throw e;
  }
}

/** An operand's value for `signals`, or `fault` where computing it faults. */
export function valueAt(evaluate: Operand, signals: Readonly<Record<string, unknown>>): Value | "fault" {
  try {
    return evaluate(signals);
  } catch (e) {
    if (e instanceof EvaluationFaultSignal) return "fault";
    throw e;
  }
}
