import type { Scalar } from "@writ/runtime";

/** A subset of a finite universe of values (an enum's values, or `true` and `false`), in the universe's order. */
export class ChoiceSet {
  constructor(
    readonly universe: readonly Scalar[],
    readonly values: ReadonlySet<Scalar>,
  ) {}

  static all(universe: readonly Scalar[]): ChoiceSet {
    return new ChoiceSet(universe, new Set(universe));
  }

  intersect(other: ChoiceSet): ChoiceSet {
    return new ChoiceSet(this.universe, new Set([...this.values].filter((v) => other.values.has(v))));
  }

  complement(): ChoiceSet {
    return new ChoiceSet(this.universe, new Set(this.universe.filter((v) => !this.values.has(v))));
  }

  isEmpty(): boolean {
    return this.values.size === 0;
  }

  /** The members in the universe's order. */
  members(): Scalar[] {
    return this.universe.filter((v) => this.values.has(v));
  }
}
