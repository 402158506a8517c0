/**
 * Request validation without rewriting (a signing service signs what it was sent): fastify's default ajv options
 * coerce types, remove additional properties and apply defaults; here all three are off, every schema is strict,
 * and the first failure is reported (fastify's message format, which is the spec's for a missing property).
 *
 * The schemas are @writ/wire's, the ones the OpenAPI documents show. A route validates its body with them either as
 * fastify's route schema (`bodySchema`: compiled once, when the server starts) or, where the body is checked at a
 * later point of the request (`/evaluate`'s dispatch, the rate limit before the legacy `/execute`'s body), with
 * `bodyCheck`; both answer the same errors. `format` is an annotation here: a date-time member is checked after the
 * schema, with the runtime's own rule and a message of its own (surface-b/timestamps.ts, `/confirm-execution`).
 */
import { Ajv, type ErrorObject } from "ajv";
import type { FastifySchemaCompiler, RouteShorthandOptions } from "fastify";
import type { Static, TSchema } from "@writ/wire";
import { SidecarHttpError, invalidRequest } from "./errors.js";

const ajv = new Ajv({
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: false,
  allErrors: false,
  strict: true,
  formats: { "date-time": true },
});

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema }) => ajv.compile(schema as object);

/**
 * ajv's message, naming the member an `additionalProperties` failure is about and the values an `enum` allows (ajv's
 * own text says neither).
 */
function messageOf(error: ErrorObject): string {
  if (error.keyword === "additionalProperties")
    return `must NOT have additional property '${String((error.params as { additionalProperty: string }).additionalProperty)}'`;
  if (error.keyword === "enum")
    return `must be equal to one of the allowed values: ${(error.params as { allowedValues: unknown[] }).allowedValues.join(", ")}`;
  return error.message ?? "is invalid";
}

/**
 * The spec's 400 for a body that fails its schema: `body must have required property '<name>'` for the first missing
 * property, otherwise `Invalid request` with the failure's path and message.
 */
function bodyError(errors: readonly ErrorObject[]): SidecarHttpError {
  const first = errors[0];
  if (first?.keyword === "required") {
    const name = String((first.params as { missingProperty: string }).missingProperty);
    if (first.instancePath === "") return SidecarHttpError.of("MISSING_PROPERTY", name);
    return new SidecarHttpError(400, { error: `body${first.instancePath} must have required property '${name}'` }, "MISSING_PROPERTY");
  }
  return invalidRequest(errors.map((e) => ({ path: `body${e.instancePath}`, message: messageOf(e) })));
}

/** Route options that validate the body with `schema` before the handler runs, answering `bodyCheck`'s errors. */
export function bodySchema(schema: object): Pick<RouteShorthandOptions, "schema" | "schemaErrorFormatter"> {
  return { schema: { body: schema }, schemaErrorFormatter: (errors) => bodyError(errors as ErrorObject[]) };
}

export type BodyCheck<T> = (body: unknown) => T;

/** A validator of a request body, for a handler that checks it itself; throws `bodyError`'s 400s. */
export function bodyCheck<S extends TSchema>(schema: S): BodyCheck<Static<S>> {
  const validate = ajv.compile(schema);
  return (body) => {
    if (validate(body)) return body as Static<S>;
    throw bodyError(validate.errors ?? []);
  };
}

/** A check of one value against `schema`: null when it passes, else what is wrong with it, in `bodyError`'s words. */
export function valueCheck(schema: TSchema): (value: unknown) => string | null {
  const validate = ajv.compile(schema);
  return (value) => {
    if (validate(value)) return null;
    const [first] = validate.errors ?? [];
    return first === undefined ? "is invalid" : messageOf(first);
  };
}
