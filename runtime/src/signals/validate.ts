import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { linearRegExpEngine } from "../regex/linear-regexp.js";
import type { SignalError } from "./signal-error.js";
import { isTimestamp } from "./timestamp.js";

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
  code: { regExp: linearRegExpEngine },
});
// `timestamp` signals carry `format: date-time`; writ's definition (RFC 3339, real dates, no leap second).
ajv.addFormat("date-time", { type: "string", validate: isTimestamp });

export function createSignalValidator(schema: object): SignalValidator {
  const validate: ValidateFunction = ajv.compile(schema);
  return (signals) => {
    if (typeof signals !== "object" || signals === null || Array.isArray(signals)) {
      return { valid: false, errors: [{ code: "VAL-001", signal: "", message: "signals must be a JSON object" }] };
    }
    if (validate(signals)) return { valid: true };
    return { valid: false, errors: (validate.errors ?? []).map(toSignalError) };
  };
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
    default:
      return { code: "VAL-012", signal: fromPath, message: `signal \`${fromPath}\` does not match the declared pattern` };
  }
}
