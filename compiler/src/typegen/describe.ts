/**
 * What a JSON Schema says that a TypeScript type cannot (an integer, bounds, a format, a pattern, lengths), written as
 * a sentence into each subschema's `description`, which json-schema-to-typescript turns into the doc comment of the
 * member: `risk_score: integer 0..100` becomes `/** An integer >= 0 and <= 100. *\/ risk_score: number;`.
 */

/** A schema typegen cannot turn into types; the message is a clause (`uses \`$ref\`...`). */
export class UnsupportedSchemaError extends Error {}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };

/** The keywords whose values are subschemas, and those whose values map names to subschemas. */
const SUBSCHEMA = ["items", "additionalItems", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"];
const SUBSCHEMA_LISTS = ["allOf", "anyOf", "oneOf", "items"];
const SUBSCHEMA_MAPS = ["properties", "patternProperties", "definitions", "$defs", "dependencies"];

/**
 * A copy of `schema` with every subschema's constraints described. Subschemas lose `title` and `$id`, so nested
 * objects stay inline in the type of the member that holds them instead of becoming declarations of their own whose
 * names could clash across policies; the root keeps its own.
 * @throws UnsupportedSchemaError for a schema of anything but an object, and for a `$ref`: a type it named would be declared by that name, which two policies'
 * schemas could share (writ's compiler never writes one)
 */
export function describeSchema(schema: object): Schema {
  if ((schema as Schema)["type"] !== "object")
    throw new UnsupportedSchemaError("does not describe a JSON object (its `type` is not `object`)");
  return describe(schema as Schema, true);
}

function describe(schema: Schema, root: boolean): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$ref") throw new UnsupportedSchemaError("uses `$ref`, which typegen does not follow");
    if (!root && (key === "title" || key === "$id")) continue;
    out[key] = subschemas(key, value);
  }
  const sentence = constraints(schema);
  if (sentence !== null)
    out["description"] = typeof schema["description"] === "string" ? `${schema["description"]}\n\n${sentence}` : sentence;
  return out;
}

function subschemas(key: string, value: Json): Json {
  const isSchema = (v: Json): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);
  if (SUBSCHEMA_LISTS.includes(key) && Array.isArray(value)) return value.map((v) => (isSchema(v) ? describe(v, false) : v));
  if (SUBSCHEMA.includes(key) && isSchema(value)) return describe(value, false);
  if (SUBSCHEMA_MAPS.includes(key) && isSchema(value)) {
    return Object.fromEntries(Object.entries(value).map(([name, v]) => [name, isSchema(v) ? describe(v, false) : v]));
  }
  return value;
}

/** One sentence for what the TypeScript type does not say, or null when it says everything. */
function constraints(s: Schema): string | null {
  const types = Array.isArray(s["type"]) ? s["type"] : [s["type"]];
  const integer = types.includes("integer") && !types.includes("number");
  const comparisons = [
    ...bound(s, "minimum", ">="),
    ...bound(s, "exclusiveMinimum", ">"),
    ...bound(s, "maximum", "<="),
    ...bound(s, "exclusiveMaximum", "<"),
  ];
  const others = [
    ...(typeof s["multipleOf"] === "number" ? [`a multiple of ${s["multipleOf"]}`] : []),
    ...(typeof s["format"] === "string" ? [formatClause(s["format"])] : []),
    ...(typeof s["pattern"] === "string" ? [`matching \`${s["pattern"]}\``] : []),
    ...lengths(s),
    ...(s["uniqueItems"] === true ? ["with no item twice"] : []),
  ];
  if (!integer && comparisons.length === 0 && others.length === 0) return null;
  const decimal = typeof s["format"] === "string" && DECIMAL.test(s["format"]);
  const subject = integer ? "An integer" : decimal ? "A decimal" : (SUBJECTS[types.length === 1 ? String(types[0]) : ""] ?? "A value");
  // `An integer >= 0 and <= 100.`, `A string matching `^[A-Z]{2}$`, of 2 to 64 characters.`
  const clauses = [...(comparisons.length > 0 ? [comparisons.join(" and ")] : []), ...others];
  return `${[subject, clauses.join(", ")].join(" ").trimEnd()}.`;
}

const DECIMAL = /^decimal\((\d+)\)$/;

/**
 * What a format means, said plainly for writ's own (docs/language.md "Signals schema"). A decimal is a JavaScript
 * number here: JSON.stringify writes its shortest form, which is the decimal writ reads, exactly.
 */
function formatClause(format: string): string {
  const places = DECIMAL.exec(format)?.[1];
  if (places !== undefined) return `with at most ${places} decimal place${places === "1" ? "" : "s"}, computed exactly (\`${format}\`)`;
  if (format === "nfc") return "in Unicode normalization form C (NFC)";
  if (format === "ip") return "in IP address form (IPv4 `203.0.113.7` or IPv6 `2001:db8::7`)";
  if (format === "semver") return "in SemVer 2.0.0 form (a semantic version, such as `2.4.0-rc.1`)";
  return `in format \`${format}\``;
}

const SUBJECTS: Readonly<Record<string, string>> = { number: "A number", string: "A string", array: "An array", object: "An object" };

function bound(s: Schema, keyword: string, op: string): string[] {
  return typeof s[keyword] === "number" ? [`${op} ${s[keyword]}`] : [];
}

/** The string length bounds (array bounds are json-schema-to-typescript's own `@minItems` and `@maxItems` tags). */
function lengths(s: Schema): string[] {
  const min = typeof s["minLength"] === "number" ? s["minLength"] : null;
  const max = typeof s["maxLength"] === "number" ? s["maxLength"] : null;
  const units = (n: number): string => `${n} character${n === 1 ? "" : "s"}`;
  if (min !== null && max !== null) return [min === max ? `of exactly ${units(min)}` : `of ${min} to ${units(max)}`];
  if (min !== null) return [`of at least ${units(min)}`];
  return max !== null ? [`of at most ${units(max)}`] : [];
}
