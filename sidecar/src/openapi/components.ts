/**
 * The schemas of an OpenAPI document: each named shape of @writ/wire (a schema with a `title`) written once, under
 * `components.schemas`, and referred to by `$ref` wherever it is used, with the using member's own description beside
 * the reference. A titled schema that is not wire's named shape, or a changed copy of one, is refused: its title
 * would name something else than what it is.
 */
import * as Wire from "@writ/wire";

export type Json = null | boolean | number | string | readonly Json[] | { readonly [name: string]: Json };

interface Titled {
  readonly title: string;
  readonly description?: string;
}

function isTitled(value: unknown): value is Titled {
  return typeof value === "object" && value !== null && typeof (value as { title?: unknown }).title === "string";
}

/**
 * The schema as JSON, its object members sorted: two schemas are the same shape when these are equal. A named shape
 * inside it is written as its title (each is compared where it is referred to itself), so a shape that contains itself
 * (wire's `ExplainedExpr`) is written once.
 */
function canonical(value: unknown, root = true): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item, false)).join(",")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (!root && isTitled(value)) return `{"$title":${JSON.stringify(value.title)}}`;
  const members = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${members.map(([name, member]) => `${JSON.stringify(name)}:${canonical(member, false)}`).join(",")}}`;
}

function withoutDescription(schema: object): object {
  const { description: _description, ...rest } = schema as { description?: unknown };
  return rest;
}

/** Wire's named shapes, by title. */
const NAMED: ReadonlyMap<string, Titled> = (() => {
  const named = new Map<string, Titled>();
  for (const value of Object.values(Wire)) {
    if (!isTitled(value)) continue;
    const known = named.get(value.title);
    if (known !== undefined && known !== value) throw new Error(`two shapes of @writ/wire are titled \`${value.title}\``);
    named.set(value.title, value);
  }
  return named;
})();

export class Components {
  readonly #schemas = new Map<string, Json>();

  /** `schema` as the document writes it: every named shape in it a `$ref` to its component. */
  schema(schema: object): Json {
    return this.#write(schema, null);
  }

  /** The components used so far, by name. */
  schemas(): Record<string, Json> {
    return Object.fromEntries([...this.#schemas.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** `value` written out; `component` is the named shape being written as its component (not referred to). */
  #write(value: unknown, component: Titled | null): Json {
    if (Array.isArray(value)) return value.map((item) => this.#write(item, null));
    if (typeof value !== "object" || value === null) return value as Json;
    if (isTitled(value) && value !== component) return this.#reference(value);
    return Object.fromEntries(Object.entries(value).map(([name, member]) => [name, this.#write(member, null)]));
  }

  #reference(used: Titled): Json {
    const named = NAMED.get(used.title);
    if (named === undefined) throw new Error(`a schema titled \`${used.title}\` is not a named shape of @writ/wire`);
    if (canonical(withoutDescription(used)) !== canonical(withoutDescription(named))) {
      throw new Error(`a schema titled \`${used.title}\` is a changed copy of @writ/wire's \`${used.title}\``);
    }
    if (!this.#schemas.has(named.title)) {
      // Set before it is written, so that a shape that contains itself refers to itself instead of recursing.
      this.#schemas.set(named.title, null);
      this.#schemas.set(named.title, this.#write(named, named));
    }
    const ref = `#/components/schemas/${named.title}`;
    return used.description === undefined || used.description === named.description
      ? { $ref: ref }
      : { $ref: ref, description: used.description };
  }
}
