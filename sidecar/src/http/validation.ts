/**
 * Request validation without rewriting (a signing service signs what it was sent): fastify's default ajv options
 * coerce types, remove additional properties and apply defaults; here all three are off, every schema is strict,
 * and the first failure is reported (fastify's message format, which is the spec's for a missing property).
 */
import { Ajv, type ErrorObject } from "ajv";
import type { FastifySchemaCompiler } from "fastify";
import { SidecarHttpError, invalidRequest } from "./errors.js";

const ajv = new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false, strict: true });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema }) => ajv.compile(schema as object);

/** ajv's message, naming the member an `additionalProperties` failure is about (ajv's own text does not). */
function messageOf(error: ErrorObject): string {
  if (error.keyword === "additionalProperties") return `must NOT have additional property '${String((error.params as { additionalProperty: string }).additionalProperty)}'`;
  return error.message ?? "is invalid";
}

export type BodyCheck<T> = (body: unknown) => T;

/**
 * A validator for a request body that throws the spec's 400s: `body must have required property '<name>'` for the
 * first missing property, otherwise `Invalid request` with the failure's path and message.
 */
export function bodyCheck<T>(schema: object): BodyCheck<T> {
  const validate = ajv.compile(schema);
  return (body) => {
    if (validate(body)) return body as T;
    const first = validate.errors?.[0];
    if (first?.keyword === "required") {
      const name = String((first.params as { missingProperty: string }).missingProperty);
      if (first.instancePath === "") throw SidecarHttpError.of("MISSING_PROPERTY", name);
      throw new SidecarHttpError(400, { error: `body${first.instancePath} must have required property '${name}'` }, "MISSING_PROPERTY");
    }
    throw invalidRequest((validate.errors ?? []).map((e) => ({ path: `body${e.instancePath}`, message: messageOf(e) })));
  };
}
