/**
 * Property: the editor entry points never throw, on generated policies and on every prefix of one (a policy being
 * typed), and what they return is consistent: ranges lie in the text, a definition names what the cursor names,
 * and renaming a declaration of a valid policy leaves it valid.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkSource,
  compile,
  completionsAt,
  definitionAt,
  hoverAt,
  namesOf,
  renameAt,
  renameTargetAt,
  type TextEdit,
} from "@writ/compiler";
import { policySource } from "../support/generate-policy.js";

const SEED = Number(process.env["WRIT_FUZZ_SEED"] ?? 20_260_417);
const FILE = "editor.writ";

function applyEdits(text: string, edits: readonly TextEdit[]): string {
  return [...edits]
    .sort((a, b) => b.range.start - a.range.start)
    .reduce((t, e) => t.slice(0, e.range.start) + e.newText + t.slice(e.range.end), text);
}

function inText(text: string, r: { start: number; end: number } | null): void {
  if (r) expect(0 <= r.start && r.start <= r.end && r.end <= text.length).toBe(true);
}

describe("the editor entry points", () => {
  it("answer at any offset of generated policies and of their prefixes without throwing", () => {
    fc.assert(
      fc.property(policySource(), fc.array(fc.nat(), { minLength: 8, maxLength: 8 }), (source, picks) => {
        const whole = checkSource(FILE, source);
        const names = namesOf(whole);
        for (const pick of picks) {
          const cut = pick % (source.length + 1);
          const typed = source.slice(0, cut);
          const check = checkSource(FILE, typed);
          for (const offset of [cut, pick % (cut + 1)]) {
            completionsAt(check, offset, names);
            inText(typed, hoverAt(check, offset)?.range ?? null);
            const target = definitionAt(check, offset);
            inText(typed, target);
            if (target) expect(typed.slice(target.start, target.end)).toBe(check.symbols!.at(offset)!.name);
            renameTargetAt(check, offset);
          }
        }
      }),
      { seed: SEED, numRuns: 100 },
    );
  });

  it("rename a declaration of a valid policy into a valid policy", () => {
    fc.assert(
      fc.property(policySource(), fc.nat(), (source, pick) => {
        const check = checkSource(FILE, source);
        fc.pre(compile(FILE, source).valid);
        const declarations = check.symbols!.occurrences.filter((o) => o.declaration);
        fc.pre(declarations.length > 0);
        const d = declarations[pick % declarations.length]!;
        const renamed = renameAt(check, d.span.start.offset, "zz_renamed");
        expect(renamed.ok).toBe(true);
        if (renamed.ok) expect(compile(FILE, applyEdits(source, renamed.edits)).valid).toBe(true);
      }),
      { seed: SEED, numRuns: 100 },
    );
  });
});
