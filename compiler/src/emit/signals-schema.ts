import type { PolicyAst, SignalDecl } from "../syntax/ast.js";
import { TIMESTAMP_PATTERN } from "@writ/runtime";

/**
 * The signals schema: JSON Schema draft-07, closed (`additionalProperties: false`), one property per signal,
 * scalars only. The runtime validates it with ajv in strict mode with no coercion, removal or defaults, and
 * maps each failure to a VAL code (docs/language.md "Signals schema").
 */
export function signalsSchema(ast: PolicyAst): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const s of ast.signals) properties[s.name.name] = property(s);
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: `signals of ${ast.policyId.value}@${ast.version.value}`,
    type: "object",
    properties,
    required: ast.signals.filter((s) => !s.optional).map((s) => s.name.name),
    additionalProperties: false,
  };
}

function property(s: SignalDecl): Record<string, unknown> {
  const t = s.type;
  switch (t.kind) {
    case "boolean":
      return { type: "boolean" };
    case "timestamp":
      return { type: "string", format: "date-time", pattern: TIMESTAMP_PATTERN };
    case "semver":
    case "ip":
      return { type: "string", format: t.kind };
    case "enum":
      return { type: "string", enum: t.values.map((v) => v.value) };
    case "string": {
      const p: Record<string, unknown> = { type: "string" };
      for (const c of t.constraints) {
        if (c.kind === "matching") p["pattern"] = c.regex.pattern;
        else if (c.kind === "normalized") p["format"] = "nfc";
        else {
          p["minLength"] = c.min.value;
          p["maxLength"] = c.max.value;
        }
      }
      return p;
    }
    case "number":
    case "integer":
    case "decimal": {
      const p: Record<string, unknown> = t.kind === "decimal" ? { type: "number", format: `decimal(${t.places.value})` } : { type: t.kind };
      for (const c of t.constraints) {
        if (c.kind === "range") {
          p["minimum"] = c.min.value;
          p["maximum"] = c.max.value;
        } else {
          const key = { ">=": "minimum", ">": "exclusiveMinimum", "<=": "maximum", "<": "exclusiveMaximum" }[c.op];
          p[key] = c.value.value;
        }
      }
      return p;
    }
  }
}
