/**
 * A second version of a generated policy, made by one of the edits an author makes: change a constant (move a number,
 * swap a string literal for another), reorder rules,
 * flip a verdict, add or remove a rule, widen or narrow an enum, reword a reason, rename a rule, add or drop the
 * catch-all, or nothing at all. The result may not compile (a narrowed enum still named by a rule): tests skip those.
 */
import fc from "fast-check";
import { encodeString, type PolicyModel, type RuleSpec } from "../../support/generate-policy.js";

export type Parts = Pick<PolicyModel, "header" | "signals" | "consts" | "rules" | "otherwise">;

export const MUTATIONS = ["identity", "constant", "reorder", "flip", "add", "remove", "enum", "reason", "rename", "otherwise"] as const;
export type Mutation = (typeof MUTATIONS)[number];

const VERDICTS = ["approve", "escalate", "reject"] as const;
const POOL = ["USD", "EUR", "low", "high", "gold", "web", "é", "new value"];

/** A number literal outside strings and patterns: `12`, `0.5`, `2.5e3`. */
const NUMBER = /(?<![\w.])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])/g;
const STRING = /"(?:[^"\\]|\\.)*"/g;
const PATTERN = /matches\s*\/(?:[^/\\[]|\\.|\[(?:[^\]\\]|\\.)*\])*\//g;

interface Site {
  readonly index: number;
  readonly text: string;
  readonly kind: "number" | "string";
}

/** The literals of a condition: numbers outside strings and `/patterns/`, and strings. */
function literals(when: string): Site[] {
  const strings = [...when.matchAll(STRING)].map((m): Site => ({ index: m.index, text: m[0], kind: "string" }));
  const blanked = when.replace(STRING, (m) => " ".repeat(m.length)).replace(PATTERN, (m) => " ".repeat(m.length));
  return [...[...blanked.matchAll(NUMBER)].map((m): Site => ({ index: m.index, text: m[0], kind: "number" })), ...strings];
}

function moved(value: number, how: number): number {
  const next = [value + 1, value - 1, value + 0.5, value * 2, value / 2][how % 5]!;
  return next < 0 || !Number.isFinite(next) ? value + 1 : next;
}

export function mutate(parts: Parts, kind: Mutation, a: number, b: number): Parts {
  const rules = [...parts.rules];
  const n = rules.length;
  switch (kind) {
    case "identity":
      return parts;
    case "constant": {
      const sites = rules.flatMap((r, i) => literals(r.when).map((l) => ({ rule: i, ...l })));
      if (sites.length === 0) return parts;
      const site = sites[a % sites.length]!;
      const others = [...new Set(sites.filter((x) => x.kind === "string" && x.text !== site.text).map((x) => x.text))];
      const text =
        site.kind === "number" ? String(moved(Number(site.text), b)) : (others[b % Math.max(others.length, 1)] ?? encodeString("KP"));
      const rule = rules[site.rule]!;
      rules[site.rule] = { ...rule, when: rule.when.slice(0, site.index) + text + rule.when.slice(site.index + site.text.length) };
      return { ...parts, rules };
    }
    case "reorder": {
      if (n < 2) return parts;
      const [i, j] = [a % n, (a + 1 + (b % (n - 1))) % n];
      [rules[i], rules[j]] = [rules[j]!, rules[i]!];
      return { ...parts, rules };
    }
    case "flip": {
      if (a % (n + 1) === n || n === 0) {
        if (!parts.otherwise) return parts;
        return { ...parts, otherwise: { ...parts.otherwise, verdict: other(parts.otherwise.verdict, b) } };
      }
      const r = rules[a % n]!;
      rules[a % n] = { ...r, verdict: other(r.verdict, b) };
      return { ...parts, rules };
    }
    case "add": {
      const x = rules[a % Math.max(n, 1)]?.when ?? "true";
      const y = rules[b % Math.max(n, 1)]?.when ?? "false";
      const when = [`not (${x})`, `(${x}) and (${y})`, `(${x}) or (${y})`][b % 3]!;
      const added: RuleSpec = { name: `added_${n}`, when, verdict: VERDICTS[a % 3]!, reason: encodeString("added rule") };
      rules.splice(b % (n + 1), 0, added);
      return { ...parts, rules };
    }
    case "remove":
      if (n === 0) return parts;
      rules.splice(a % n, 1);
      return { ...parts, rules };
    case "enum": {
      const enums = parts.signals.flatMap((s, i) => (s.kind === "enum" ? [i] : []));
      if (enums.length === 0) return parts;
      const at = enums[a % enums.length]!;
      const s = parts.signals[at]! as Extract<Parts["signals"][number], { kind: "enum" }>;
      const fresh = POOL.find((v) => !s.values.includes(v));
      const values =
        b % 2 === 0 && fresh !== undefined
          ? [...s.values, fresh]
          : s.values.length > 1
            ? s.values.filter((_, i) => i !== b % s.values.length)
            : s.values;
      const signals = [...parts.signals];
      signals[at] = { ...s, values, constraintText: values.map((v) => encodeString(v)).join(" | ") };
      return { ...parts, signals };
    }
    case "reason": {
      if (n === 0) return parts;
      rules[a % n] = { ...rules[a % n]!, reason: encodeString("reworded reason") };
      return { ...parts, rules };
    }
    case "rename": {
      if (n === 0) return parts;
      rules[a % n] = { ...rules[a % n]!, name: `${rules[a % n]!.name}_renamed` };
      return { ...parts, rules };
    }
    case "otherwise":
      return { ...parts, otherwise: parts.otherwise ? null : { verdict: VERDICTS[b % 3]!, reason: encodeString("added catch-all") } };
  }
}

function other(v: RuleSpec["verdict"], b: number): RuleSpec["verdict"] {
  const others = VERDICTS.filter((x) => x !== v);
  return others[b % others.length]!;
}

/** One or two mutations, with the numbers that pick their sites. */
export const mutationsArb = fc.array(fc.tuple(fc.constantFrom(...MUTATIONS), fc.nat(), fc.nat()), { minLength: 1, maxLength: 2 });
