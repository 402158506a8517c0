/**
 * How the wire's shapes are written: TypeBox schemas, which are JSON Schema (2020-12) at run time and, through
 * `Static`, the TypeScript types of the same name. Each shape is written once here and read three ways: as the type
 * the SDK and the sidecar use, as the schema the sidecar validates request bodies with, and as the schema of the
 * OpenAPI documents (docs/openapi/). Objects are closed (a member not named is refused, or never sent) and readonly;
 * a named shape has a `title`, which names it among the OpenAPI documents' components.
 */
import {
  Type,
  type Static,
  type TArray,
  type TImmutable,
  type TObject,
  type TProperties,
  type TReadonly,
  type TSchema,
  type TSchemaOptions,
} from "typebox";

export type { Static, TSchema };

/** Annotations of a shape: its `title` (the component name) and `description`. */
export type Annotations = Pick<TSchemaOptions, "title" | "description">;

/** `properties`, each readonly. */
export type ReadonlyMembers<P extends TProperties> = { [K in keyof P]: TReadonly<P[K]> };

/** A closed object: no member beyond `properties`, every member readonly. Extend one by spreading its `properties`. */
export function Closed<P extends TProperties>(properties: P, annotations: Annotations = {}): TObject<ReadonlyMembers<P>> {
  const members = Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, Type.Readonly(schema)]));
  return Type.Object(members, { ...annotations, additionalProperties: false }) as TObject<ReadonlyMembers<P>>;
}

/** A readonly array. */
export function List<T extends TSchema>(items: T, annotations: Annotations = {}): TImmutable<TArray<T>> {
  return Type.Immutable(Type.Array(items, annotations)) as TImmutable<TArray<T>>;
}

/** One of the strings `values`: `{type: "string", enum}`. */
export function Choice<const V extends readonly [string, ...string[]]>(values: V, annotations: Annotations = {}) {
  return Type.Unsafe<V[number]>({ ...annotations, type: "string", enum: [...values] });
}

/** A JSON object whose members the wire leaves open: checked as an object, nothing more (any member is allowed). */
export function OpenObject(annotations: Annotations = {}) {
  return Type.Unsafe<Readonly<Record<string, unknown>>>({ ...annotations, type: "object", additionalProperties: true });
}

/** `schema` with other annotations: a member's own description of a named shape. */
export function Described<T extends TSchema>(schema: T, description: string) {
  return Type.With(schema, { description });
}

/** An ISO 8601 instant with a time zone (RFC 3339 `date-time`). */
export function Instant(description?: string) {
  return Type.String({ format: "date-time", ...(description === undefined ? {} : { description }) });
}

/** Lowercase hex SHA-256: 64 digits. */
export function Hex64(description?: string) {
  return Type.String({ pattern: "^[0-9a-f]{64}$", ...(description === undefined ? {} : { description }) });
}

/** A member of a request body that names something: a non-empty string of at most 1,024 characters. */
export function Text(description?: string) {
  return Type.String({ minLength: 1, maxLength: 1024, ...(description === undefined ? {} : { description }) });
}
