import {
  createSignalValidator,
  decisionInstant,
  explain,
  parseStrictJson,
  readsNow,
  StrictJsonError,
  type Decision,
  type SignalError,
  type SignalValidator,
} from "@writ/runtime";
import { signalsSchema } from "../emit/signals-schema.js";
import type { SourceCheck } from "./check.js";
import { conditionsOf, explanationView, type ExplanationView } from "./explanation.js";

/** What a policy decides for a signals document, as `writ eval --explain` says it, for an editor to show. */
export type SignalsOutcome =
  /** The text is not strict JSON; `line` and `column` (1-based) say where, when known. */
  | { readonly kind: "not-json"; readonly message: string; readonly line: number | null; readonly column: number | null }
  /** The policy's signals schema refuses the signals (VAL codes, docs/errors.md). */
  | { readonly kind: "refused"; readonly errors: readonly SignalError[] }
  | {
      readonly kind: "decided";
      readonly decision: Decision;
      readonly explanation: ExplanationView;
      /** The decision instant the policy's `now` read, as `issuedAt` writes it; null when the policy does not read `now`. */
      readonly now: string | null;
    };

/** `now`: the decision instant (default the current time, read once a decision), as `writ eval --now` sets it. */
export type SignalsDecider = (signalsText: string, now?: Date) => SignalsOutcome;

/** One validator per distinct schema: an editor re-checks on every pause in typing, mostly with the same signals block. */
const validators = new Map<string, SignalValidator>();

/**
 * Decides signals as a runtime would for the policy `check` lowered (`checkSource(..., { until: "lower" })`): the
 * signals parsed as strict JSON, validated against the schema the bundle would carry, then every rule explained.
 * Null when the check has no IR (the policy has errors). Runs in memory only; nothing is signed or recorded.
 */
export function signalsDecider(check: SourceCheck): SignalsDecider | null {
  const { ir, ast } = check;
  if (!ir || !ast) return null;
  const schema = signalsSchema(ast);
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) validators.set(key, (validate = createSignalValidator(schema)));
  const written = conditionsOf(ast);
  const readsClock = ir.rules.some((r) => readsNow(r.when));
  return (signalsText, now) => {
    let signals: unknown;
    try {
      signals = parseStrictJson(signalsText);
    } catch (e) {
      if (e instanceof StrictJsonError) return { kind: "not-json", message: e.message, line: e.line, column: e.column };
      return { kind: "not-json", message: e instanceof Error ? e.message : String(e), line: null, column: null };
    }
    const validation = validate(signals);
    if (!validation.valid) return { kind: "refused", errors: validation.errors };
    const at = now ?? new Date();
    const { decision, explanation } = explain(ir, signals as Record<string, unknown>, at);
    const view = explanationView(explanation, decision, written);
    return { kind: "decided", decision, explanation: view, now: readsClock ? decisionInstant(at) : null };
  };
}
