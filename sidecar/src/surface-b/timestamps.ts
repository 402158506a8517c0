/**
 * The timestamps of Surface B's bodies are real instants, by the runtime's definition (`isTimestamp`: RFC 3339 with a
 * time zone, a date that exists, no leap second), the one Surface A applies to signals and to `actionTimestamp`. A
 * JSON Schema `pattern` checks only the shape, which `2026-02-30T00:00:00Z` has: such a date would be sealed into a
 * signed Trust Record that Surface A would refuse.
 */
import { isTimestamp } from "@writ/runtime";
import { invalidRequest } from "../http/errors.js";
import type { BodyCheck } from "../http/validation.js";

/** A body member that is a timestamp: schemas.ts declares each with this very object, which is how they are found. */
export const TIMESTAMP = { type: "string" } as const;

export const TIMESTAMP_MESSAGE = "must be a date-time that exists, in RFC 3339 with a time zone, e.g. 2026-03-01T10:00:00Z";

/** The paths (`/section/member`) of every member of `schema` declared as TIMESTAMP. */
function timestampPaths(schema: object, at = ""): string[] {
  const properties = (schema as { properties?: Readonly<Record<string, object>> }).properties ?? {};
  return Object.entries(properties).flatMap(([name, member]) => (member === TIMESTAMP ? [`${at}/${name}`] : timestampPaths(member, `${at}/${name}`)));
}

function valueAt(body: unknown, path: string): unknown {
  let value = body;
  for (const name of path.split("/").slice(1)) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, name)) return undefined;
    value = (value as Readonly<Record<string, unknown>>)[name];
  }
  return value;
}

/**
 * `check` (the schema's shape), then every timestamp member of `schema`: a 400 `Invalid request` listing each one
 * that is not a real date-time, with its path, like any other bad member.
 */
export function withTimestamps<T>(check: BodyCheck<T>, schema: object): BodyCheck<T> {
  const paths = timestampPaths(schema);
  return (body) => {
    const checked = check(body);
    const bad = paths.filter((path) => {
      const value = valueAt(checked, path);
      return typeof value === "string" && !isTimestamp(value);
    });
    if (bad.length > 0) throw invalidRequest(bad.map((path) => ({ path: `body${path}`, message: TIMESTAMP_MESSAGE })));
    return checked;
  };
}
