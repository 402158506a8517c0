/**
 * The timestamps of Surface B's bodies are real instants, by the runtime's definition (`isTimestamp`: RFC 3339 with a
 * time zone, a date that exists, no leap second), the one Surface A applies to signals and to `actionTimestamp`. A
 * JSON Schema `pattern` checks only the shape, which `2026-02-30T00:00:00Z` has: such a date would be sealed into a
 * signed Trust Record that Surface A would refuse. The members checked are those @writ/wire's schema declares with
 * `format: "date-time"` (an annotation to the sidecar's ajv, http/validation.ts).
 */
import { isTimestamp } from "@writ/runtime";
import type { TSchema } from "@writ/wire";
import { invalidRequest } from "../http/errors.js";

export const TIMESTAMP_MESSAGE = "must be a date-time that exists, in RFC 3339 with a time zone, e.g. 2026-03-01T10:00:00Z";

interface Member {
  readonly format?: string;
  readonly properties?: Readonly<Record<string, Member>>;
}

/** The paths (`/section/member`) of every member of `schema` declared as a date-time. */
function timestampPaths(schema: Member, at = ""): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, member]) =>
    member.format === "date-time" ? [`${at}/${name}`] : timestampPaths(member, `${at}/${name}`),
  );
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
 * A check of a body that passed `schema`: a 400 `Invalid request` listing each timestamp member that is not a real
 * date-time, with its path, like any other bad member.
 */
export function timestampCheck(schema: TSchema): (body: unknown) => void {
  const paths = timestampPaths(schema as Member);
  return (body) => {
    const bad = paths.filter((path) => {
      const value = valueAt(body, path);
      return typeof value === "string" && !isTimestamp(value);
    });
    if (bad.length > 0) throw invalidRequest(bad.map((path) => ({ path: `body${path}`, message: TIMESTAMP_MESSAGE })));
  };
}
