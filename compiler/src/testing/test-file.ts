import {
  DECISION_INSTANT_FORM,
  FAULTS,
  copyLossyNumbers,
  parseDecisionInstant,
  parseStrictJson,
  type FaultCode,
  type Verdict,
} from "@writ/runtime";

/** `policy.test.json`, beside `policy.writ` (docs/language.md "Policy tests"). */
export interface PolicyTestFile {
  readonly cases: readonly PolicyTestCase[];
}

export type ExpectedVerdict = Verdict | "undecided";

export interface PolicyTestCase {
  readonly name: string;
  /** Where the case is in the file (`$.cases[3]`), for messages. */
  readonly at: string;
  /** The signals the case sends: the file's `baseSignals` with the case's own over them, less its `without`. */
  readonly signals: Readonly<Record<string, unknown>>;
  /** The decision instant `now` reads (`now`, RFC 3339); a case of a policy that reads `now` must give one. */
  readonly now?: Date;
  readonly expect:
    | { readonly verdict: ExpectedVerdict; readonly rule?: string; readonly reason?: string }
    | { readonly invalid: readonly string[] }
    | { readonly fault: FaultCode; readonly rule?: string };
}

export class TestFileError extends Error {}

const VERDICTS: readonly string[] = ["approve", "escalate", "reject", "undecided"];

/** Parses a test file strictly and checks its shape; a problem is one clear sentence with its JSON path. */
export function parseTestFile(text: string): PolicyTestFile {
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (e) {
    throw new TestFileError(e instanceof Error ? e.message : String(e));
  }
  const root = object(value, "$");
  only(root, ["baseSignals", "cases"], "$");
  const base = "baseSignals" in root ? object(root["baseSignals"], "$.baseSignals") : null;
  if (!Array.isArray(root["cases"]) || root["cases"].length === 0) throw new TestFileError("`$.cases` must be a non-empty array");
  const names = new Set<string>();
  const cases = root["cases"].map((c: unknown, i: number): PolicyTestCase => {
    const at = `$.cases[${i}]`;
    const o = object(c, at);
    only(o, base ? ["name", "signals", "without", "now", "expect"] : ["name", "signals", "now", "expect"], at);
    const name = o["name"];
    if (typeof name !== "string" || name.trim() === "") throw new TestFileError(`\`${at}.name\` must be a non-empty string`);
    if (names.has(name)) throw new TestFileError(`\`${at}.name\` repeats the case name \`${name}\``);
    names.add(name);
    const now = "now" in o ? { now: instant(o["now"], `${at}.now`) } : {};
    return {
      name,
      at,
      signals: caseSignals(o, base, at),
      ...now,
      expect: expectation(object(o["expect"], `${at}.expect`), `${at}.expect`),
    };
  });
  return { cases };
}

/** A case's signals: its own, or with `baseSignals` the base, less the names in `without`, with its own over them. */
function caseSignals(o: Record<string, unknown>, base: Record<string, unknown> | null, at: string): Record<string, unknown> {
  if (!base) return object(o["signals"], `${at}.signals`);
  const own = "signals" in o ? object(o["signals"], `${at}.signals`) : {};
  const without = "without" in o ? o["without"] : [];
  if (!Array.isArray(without) || !without.every((n) => typeof n === "string")) {
    throw new TestFileError(`\`${at}.without\` must be a list of signal names from \`$.baseSignals\``);
  }
  for (const n of without as string[]) {
    if (!Object.hasOwn(base, n)) throw new TestFileError(`\`${at}.without\` names \`${n}\`, which \`$.baseSignals\` does not have`);
    if (Object.hasOwn(own, n))
      throw new TestFileError(`\`${at}\` both removes and sends \`${n}\`: drop it from \`without\` or from \`signals\``);
  }
  const kept = Object.entries(base).filter(([n]) => !without.includes(n));
  const signals = { ...Object.fromEntries(kept), ...own };
  // A number the double does not carry stays refused where the case sends it (lossy-numbers in the runtime).
  copyLossyNumbers(base, signals, (n) => !without.includes(n) && !Object.hasOwn(own, n));
  copyLossyNumbers(own, signals, () => true);
  return signals;
}

function expectation(expect: Record<string, unknown>, at: string): PolicyTestCase["expect"] {
  if ("invalid" in expect) {
    only(expect, ["invalid"], at);
    const codes = expect["invalid"];
    if (!Array.isArray(codes) || codes.length === 0 || !codes.every((c) => typeof c === "string" && /^VAL-\d{3}$/.test(c))) {
      throw new TestFileError(`\`${at}.invalid\` must be a non-empty list of codes such as "VAL-004"`);
    }
    return { invalid: codes as string[] };
  }
  if ("fault" in expect) {
    only(expect, ["fault", "rule"], at);
    const code = expect["fault"];
    if (typeof code !== "string" || !Object.hasOwn(FAULTS, code)) {
      throw new TestFileError(`\`${at}.fault\` must be an evaluation fault code: ${Object.keys(FAULTS).join(", ")}`);
    }
    if ("rule" in expect && typeof expect["rule"] !== "string") throw new TestFileError(`\`${at}.rule\` must be a string`);
    return { fault: code as FaultCode, ...(typeof expect["rule"] === "string" ? { rule: expect["rule"] } : {}) };
  }
  only(expect, ["verdict", "rule", "reason"], at);
  const verdict = expect["verdict"];
  if (typeof verdict !== "string" || !VERDICTS.includes(verdict)) {
    throw new TestFileError(`\`${at}.verdict\` must be one of ${VERDICTS.join(", ")}, or give \`invalid\` or \`fault\` instead`);
  }
  for (const key of ["rule", "reason"] as const) {
    if (key in expect && typeof expect[key] !== "string") throw new TestFileError(`\`${at}.${key}\` must be a string`);
  }
  return {
    verdict: verdict as ExpectedVerdict,
    ...(typeof expect["rule"] === "string" ? { rule: expect["rule"] } : {}),
    ...(typeof expect["reason"] === "string" ? { reason: expect["reason"] } : {}),
  };
}

function instant(v: unknown, at: string): Date {
  const given = typeof v === "string" ? parseDecisionInstant(v) : null;
  if (given === null) throw new TestFileError(`\`${at}\` must be ${DECISION_INSTANT_FORM}`);
  return given;
}

function object(v: unknown, at: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new TestFileError(`\`${at}\` must be a JSON object`);
  return v as Record<string, unknown>;
}

function only(o: Record<string, unknown>, keys: readonly string[], at: string): void {
  for (const k of Object.keys(o)) {
    if (!keys.includes(k))
      throw new TestFileError(`\`${at}\` has unknown member \`${k}\` (expected ${keys.map((x) => `\`${x}\``).join(", ")})`);
  }
}
