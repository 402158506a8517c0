import {
  checkSource,
  namesOf,
  signalsDecider,
  type NameCatalogue,
  type SignalsDecider,
  type SignalsOutcome,
  type SourceCheck,
} from "@writ/compiler";

/** The file name diagnostics carry; the playground edits one policy. */
export const POLICY_FILE = "policy.writ";

/**
 * The compiler's view of the policy being edited, checked once per text: the live diagnostics, the editor features
 * (completion, hover) and the decisions all read the same check.
 */
export class PolicySession {
  private current: SourceCheck | null = null;
  private decider: SignalsDecider | null = null;
  private lastNames: NameCatalogue | null = null;

  /** Every phase up to lower, in memory; the same text is checked once. */
  check(text: string): SourceCheck {
    if (this.current?.text !== text) {
      this.current = checkSource(POLICY_FILE, text, { until: "lower" });
      this.decider = signalsDecider(this.current);
      this.lastNames = namesOf(this.current) ?? this.lastNames;
    }
    return this.current;
  }

  /** The signals and constants of the last text that parsed: completion offers them while the text is broken. */
  names(): NameCatalogue | null {
    return this.lastNames;
  }

  /** What the policy decides for the signals at `now` (default the current time); null while the policy has errors. */
  decide(policyText: string, signalsText: string, now?: Date): SignalsOutcome | null {
    this.check(policyText);
    return this.decider ? this.decider(signalsText, now) : null;
  }
}
