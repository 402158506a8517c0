import type { Diagnostic, SignalsOutcome } from "@writ/compiler";
import type { Problem } from "./render/diagnostics.js";

/** A compiler diagnostic at its span in the policy text. */
export function policyProblem(d: Diagnostic): Problem {
  return { severity: d.severity, code: d.code, message: d.message, notes: d.notes ?? [], from: d.span.start.offset, to: d.span.end.offset };
}

/**
 * What is wrong with the signals text: where the JSON stops parsing, or each VAL error of the schema at the member it
 * is about (a missing signal, at the opening brace).
 */
export function signalsProblems(text: string, outcome: SignalsOutcome | null): Problem[] {
  if (outcome?.kind === "not-json") {
    const at = outcome.line === null || outcome.column === null ? 0 : offsetOf(text, outcome.line, outcome.column);
    return [{ severity: "error", code: null, message: outcome.message, notes: [], from: at, to: at + 1 }];
  }
  if (outcome?.kind !== "refused") return [];
  return outcome.errors.map((e) => {
    const { from, to } = memberRange(text, e.signal);
    return { severity: "error", code: e.code, message: e.message, notes: [], from, to };
  });
}

function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf("\n", offset);
    if (next === -1) break;
    offset = next + 1;
  }
  return Math.min(offset + column - 1, text.length);
}

/** Where the member named `signal` is written (`"amount": ...`), else the object's opening brace. */
function memberRange(text: string, signal: string): { from: number; to: number } {
  const key = signal === "" ? -1 : text.search(new RegExp(`${escapeRegex(JSON.stringify(signal))}\\s*:`));
  if (key !== -1) return { from: key, to: key + JSON.stringify(signal).length };
  const brace = Math.max(text.indexOf("{"), 0);
  return { from: brace, to: brace + 1 };
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
