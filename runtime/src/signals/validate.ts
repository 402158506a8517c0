import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { MAX_DECLARED_PLACES, placesOf } from "../ir/exact.js";
import { lossyNumbersOf } from "../json/lossy-numbers.js";
import { linearRegExpEngine } from "../regex/linear-regexp.js";
import type { SignalError } from "./signal-error.js";
import { isIpAddress } from "./ip.js";
import { isSemver } from "./semver.js";
import { isTimestamp, TIMESTAMP_PATTERN, TIMESTAMP_SHAPE } from "./timestamp.js";

export type { SignalError } from "./signal-error.js";

export type SignalValidation = { readonly valid: true } | { readonly valid: false; readonly errors: readonly SignalError[] };
export type SignalValidator = (signals: unknown) => SignalValidation;

/**
 * ajv as a signing service needs it: no coercion, no removal of unknown members, no defaults, every
 * failure reported at once. Patterns use the `u` flag and writ's linear-time engine, as the policy evaluator's
 * `matches` does; a schema with a pattern the engine refuses does not compile (PatternRefusedError).
 */
const ajv = new Ajv({
  allErrors: true,
  strict: true,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  unicodeRegExp: true,
  code: { regExp: Object.assign(schemaRegExp, { code: linearRegExpEngine.code }) },
});
/**
 * A schema's pattern on writ's engine, but the timestamp pattern the compiler writes for every `timestamp` signal: that
 * one is writ's own, fixed and linear on V8's engine too (no quantifier can retry another), and `format: date-time`
 * beside it tests the same shape with V8 (timestamp.ts), so the linear engine would only repeat that test, slower.
 */
function schemaRegExp(pattern: string, flags: string): { test(s: string): boolean } {
  return pattern === TIMESTAMP_PATTERN && flags === "u" ? TIMESTAMP_SHAPE : linearRegExpEngine(pattern, flags);
}
// `timestamp` signals carry `format: date-time`; writ's definition (RFC 3339, real dates, no leap second).
ajv.addFormat("date-time", { type: "string", validate: isTimestamp });
// `decimal(S)` signals carry `format: decimal(S)`: at most S decimal places (docs/language.md "Decimals").
const DECIMAL_FORMAT = /^decimal\((\d+)\)$/;
for (let places = 0; places <= MAX_DECLARED_PLACES; places++) {
  ajv.addFormat(`decimal(${places})`, { type: "number", validate: (n: number) => placesOf(n) <= places });
}
// `normalized` strings carry `format: nfc`: text in Unicode normalization form C, so equal text is equal code points.
ajv.addFormat("nfc", { type: "string", validate: (s: string) => s.normalize("NFC") === s });
// `semver` signals carry `format: semver`: SemVer 2.0.0 text (semver.ts).
ajv.addFormat("semver", { type: "string", validate: isSemver });
// `ip` signals carry `format: ip`: an IPv4 or IPv6 address (ip.ts).
ajv.addFormat("ip", { type: "string", validate: isIpAddress });

/** The VAL code of a value that fails a format: its own for a version and an address, VAL-012 for the others. */
const FORMAT_CODES: Readonly<Record<string, string>> = { semver: "VAL-013", ip: "VAL-014" };

export function createSignalValidator(schema: object): SignalValidator {
  const validate: ValidateFunction = ajv.compile(schema);
  const numeric = numericSignals(schema);
  return (signals) => {
    if (typeof signals !== "object" || signals === null || Array.isArray(signals)) {
      return { valid: false, errors: [{ code: "VAL-001", signal: "", message: "signals must be a JSON object" }] };
    }
    const lossy = lossyNumbersOf(signals);
    if (validate(signals) && lossy === undefined) return { valid: true };
    const errors = (validate.errors ?? []).map(toSignalError);
    for (const [signal, text] of lossy ?? []) {
      const type = numeric.get(signal);
      if (type === undefined) continue;
      const refusal = lossyRefusal(signal, text, type, (signals as Record<string, unknown>)[signal] as number);
      if (!errors.some((e) => e.signal === signal && e.code === refusal.code)) errors.push(refusal);
    }
    return errors.length === 0 ? { valid: true } : { valid: false, errors };
  };
}

/** The type of each number signal of a schema: `number`, `integer`, or a decimal's places. */
function numericSignals(schema: object): ReadonlyMap<string, "number" | "integer" | number> {
  const types = new Map<string, "number" | "integer" | number>();
  const properties = (schema as { properties?: Record<string, { type?: unknown; format?: unknown }> }).properties ?? {};
  for (const [name, p] of Object.entries(properties)) {
    const places = typeof p.format === "string" ? DECIMAL_FORMAT.exec(p.format)?.[1] : undefined;
    if (places !== undefined) types.set(name, Number(places));
    else if (p.type === "number" || p.type === "integer") types.set(name, p.type);
  }
  return types;
}

/** A number whose text a double does not carry, refused in the terms of its signal's type. */
function lossyRefusal(signal: string, text: string, type: "number" | "integer" | number, read: number): SignalError {
  const shown = text.length > 40 ? `${text.slice(0, 40)}...` : text;
  if (type === "integer") return { code: "VAL-008", signal, message: `signal \`${signal}\` must be an integer, got \`${shown}\`` };
  if (typeof type === "number" && writtenPlaces(text) > type) {
    return {
      code: "VAL-012",
      signal,
      message: `signal \`${signal}\` must have at most ${type} decimal places (decimal(${type})), got \`${shown}\``,
    };
  }
  const what = typeof type === "number" ? `decimal(${type})` : "number";
  const hint =
    typeof type === "number"
      ? "send at most 15 significant digits"
      : "send at most 15 significant digits, or declare the signal `decimal(S)`";
  return {
    code: typeof type === "number" ? "VAL-012" : "VAL-007",
    signal,
    message: `signal \`${signal}\` is \`${shown}\`, which a ${what} cannot hold exactly (it would be read as ${read}): ${hint}`,
  };
}

/** The decimal places a number's text writes, trailing zeros aside: `1.50` has 1, `2.5e-3` has 4. */
function writtenPlaces(text: string): number {
  const e = text.search(/[eE]/);
  const mantissa = e === -1 ? text : text.slice(0, e);
  const dot = mantissa.indexOf(".");
  const fraction = dot === -1 ? "" : mantissa.slice(dot + 1).replace(/0+$/, "");
  return Math.max(0, fraction.length - (e === -1 ? 0 : Number(text.slice(e + 1))));
}

const TYPE_CODES: Record<string, [string, string]> = {
  string: ["VAL-006", "a string"],
  number: ["VAL-007", "a finite number"],
  integer: ["VAL-008", "an integer"],
  boolean: ["VAL-009", "a boolean"],
};

function toSignalError(e: ErrorObject): SignalError {
  const fromPath = e.instancePath.slice(1).replace(/~1/g, "/").replace(/~0/g, "~");
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "additionalProperties": {
      const name = String(p["additionalProperty"]);
      return { code: "VAL-003", signal: name, message: `signal \`${name}\` is not declared by the policy` };
    }
    case "required": {
      const name = String(p["missingProperty"]);
      return { code: "VAL-004", signal: name, message: `required signal \`${name}\` is missing` };
    }
    case "type": {
      const [code, what] = TYPE_CODES[String(p["type"])] ?? ["VAL-006", String(p["type"])];
      return { code, signal: fromPath, message: `signal \`${fromPath}\` must be ${what}` };
    }
    case "enum":
      return {
        code: "VAL-010",
        signal: fromPath,
        message: `signal \`${fromPath}\` must be one of ${(p["allowedValues"] as unknown[]).map((v) => `\`${String(v)}\``).join(", ")}`,
      };
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return {
        code: "VAL-011",
        signal: fromPath,
        message: `signal \`${fromPath}\` must be ${String(p["comparison"])} ${String(p["limit"])}`,
      };
    case "minLength":
    case "maxLength":
      return {
        code: "VAL-011",
        signal: fromPath,
        message: `signal \`${fromPath}\` must have ${e.keyword === "minLength" ? "at least" : "at most"} ${String(p["limit"])} characters`,
      };
    case "format": {
      const format = String(p["format"]);
      return { code: FORMAT_CODES[format] ?? "VAL-012", signal: fromPath, message: `signal \`${fromPath}\` ${formatRefusal(format)}` };
    }
    default:
      return { code: "VAL-012", signal: fromPath, message: `signal \`${fromPath}\` does not match the declared pattern` };
  }
}

/** What a value failing a format lacks, after "signal `x`". */
function formatRefusal(format: string): string {
  const places = DECIMAL_FORMAT.exec(format)?.[1];
  if (places !== undefined) return `must have at most ${places} decimal places (${format})`;
  if (format === "nfc") return "must be text in Unicode normalization form C (NFC): normalize it before sending";
  if (format === "ip")
    return "must be an IP address: IPv4 as `203.0.113.7` (no leading zeros) or IPv6 as `2001:db8::7`, with no zone (`%eth0`)";
  if (format === "semver")
    return "must be a semantic version (SemVer 2.0.0), such as `2.4.0` or `2.4.0-rc.1+build.5`: no `v` prefix, no leading zeros, numbers at most 9007199254740991";
  return "does not match the declared pattern";
}
