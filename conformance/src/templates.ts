/**
 * Templates of a case's requests (docs/conformance.md, "Templates"), resolved when a step is sent:
 * `{{uuid:NAME}}` (one fresh UUID per case and name), `{{uuid:NAME:VX}}` and `{{uuid:NAME:VX:upper}}` (the same, of
 * version V and variant digit X, optionally spelled in upper case), `{{uuid}}` (a fresh UUID at every use: every
 * repetition of a repeat step gets its own), `{{capture:NAME}}` (a value captured by an earlier step), `{{now}}`,
 * `{{now+N}}`, `{{now-N}}` (ISO 8601, shifted by N seconds). And the `$with` body operator: a captured value copied
 * with changes, the way a case tampers with an attestation.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { isPlainObject } from "./matchers.js";
import { withChanges, PointerError } from "./json-pointer.js";

export class TemplateError extends Error {
  override readonly name = "TemplateError";
}

const TEMPLATE = /\{\{([^{}]*)\}\}/g;
const WHOLE_CAPTURE = /^\{\{capture:([A-Za-z0-9_.-]+)\}\}$/;
const FORMS = [
  /^uuid$/,
  /^uuid:[A-Za-z0-9_.-]+$/,
  /^uuid:[A-Za-z0-9_.-]+:[1-5][89ab](:upper)?$/,
  /^capture:[A-Za-z0-9_.-]+$/,
  /^now$/,
  /^now[+-][0-9]{1,9}$/,
];
const KNOWN = "{{uuid}}, {{uuid:NAME}}, {{uuid:NAME:VX}}, {{uuid:NAME:VX:upper}}, {{capture:NAME}}, {{now}}, {{now+N}}, {{now-N}}";

/**
 * How a named UUID is made: `""` for `{{uuid:NAME}}` (a random v4, lower case), else `VX` or `VX:upper`: version
 * digit V (1 to 5), variant digit X (8, 9, a or b), upper case or not.
 */
export type UuidForm = string;

/** A named UUID template (`uuid:NAME` or `uuid:NAME:VX[:upper]`, without the braces) taken apart. */
export type NamedUuid = { readonly name: string; readonly form: UuidForm } | { readonly name: string; readonly problem: string };

const UUID_NAME = /^uuid:([A-Za-z0-9_.-]+)(?::(.*))?$/s;
const UUID_SUFFIX =
  "`{{uuid:NAME:VX}}` or `{{uuid:NAME:VX:upper}}`, V the version digit 1 to 5, X the variant digit 8, 9, a or b (e.g. `{{uuid:tx:1a}}`)";

/** `inner` as a named UUID template, or null when it is none (`uuid`, another template, a bad name). */
export function namedUuid(inner: string): NamedUuid | null {
  const m = UUID_NAME.exec(inner);
  if (!m) return null;
  const name = m[1]!;
  const suffix = m[2];
  if (suffix === undefined) return { name, form: "" };
  const parts = /^(.)(.)(?::(.*))?$/s.exec(suffix);
  const problem = (why: string) => ({
    name,
    problem: `\`{{${inner}}}\`: ${why}; a UUID of a chosen version and variant is ${UUID_SUFFIX}`,
  });
  if (!parts) return problem("the suffix must be two digits, the version and the variant");
  const [, version, variant, casing] = parts as unknown as [string, string, string, string | undefined];
  if (!/^[1-5]$/.test(version)) return problem(`the version digit must be 1 to 5, not \`${version}\``);
  if (!/^[89ab]$/.test(variant)) return problem(`the variant digit must be 8, 9, a or b (lower case), not \`${variant}\``);
  if (casing !== undefined && casing !== "upper") return problem(`\`${casing}\` is not a spelling; only \`upper\` is`);
  return { name, form: suffix };
}

/** A fresh UUID of `form` (see `UuidForm`): random bits but for the version and variant digits. */
export function uuidOfForm(form: UuidForm): string {
  if (form === "") return randomUUID();
  const bytes = randomBytes(16);
  bytes[6] = (bytes[6]! & 0x0f) | (Number.parseInt(form[0]!, 16) << 4);
  bytes[8] = (bytes[8]! & 0x0f) | (Number.parseInt(form[1]!, 16) << 4);
  const hex = bytes.toString("hex");
  const text = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return form.endsWith(":upper") ? text.toUpperCase() : text;
}

/** `{{uuid:NAME...}}` as it is written for `name` in `form`. */
export function uuidTemplate(name: string, form: UuidForm): string {
  return `{{uuid:${name}${form === "" ? "" : `:${form}`}}}`;
}

/** The state templates read: one per case run. */
export class CaseScope {
  readonly #uuids = new Map<string, { readonly form: UuidForm; readonly value: string }>();
  readonly #captures = new Map<string, unknown>();

  constructor(private readonly clock: () => Date = () => new Date()) {}

  /**
   * The case's UUID of that name, made on first use in `form`. One name is one UUID: asking for it in another form
   * (`{{uuid:tx}}` and `{{uuid:tx:1a}}` in one case) is an error.
   * @throws TemplateError
   */
  uuid(name: string, form: UuidForm = ""): string {
    const known = this.#uuids.get(name);
    if (known === undefined) {
      const value = uuidOfForm(form);
      this.#uuids.set(name, { form, value });
      return value;
    }
    if (known.form !== form)
      throw new TemplateError(
        `\`${uuidTemplate(name, form)}\`: this case already made the UUID \`${name}\` as \`${uuidTemplate(name, known.form)}\`; one name is one UUID, of one form`,
      );
    return known.value;
  }

  capture(name: string, value: unknown): void {
    this.#captures.set(name, value);
  }

  /**
   * A capture, or `uuid:NAME` for the case's UUID of that name as it was sent, whatever its form (`{{uuid:NAME}}`,
   * `{{uuid:NAME:VX}}`, `{{uuid:NAME:VX:upper}}`); a v4 made now if no template used the name yet.
   */
  lookup(name: string): { found: true; value: unknown } | { found: false } {
    if (name.startsWith("uuid:")) {
      const uuidName = name.slice(5);
      return { found: true, value: this.#uuids.get(uuidName)?.value ?? this.uuid(uuidName) };
    }
    return this.#captures.has(name) ? { found: true, value: this.#captures.get(name) } : { found: false };
  }

  now(): Date {
    return this.clock();
  }
}

/** The template names in `text` that are not one of the forms above. */
export function unknownTemplates(text: string): string[] {
  return [...text.matchAll(TEMPLATE)].map((m) => m[1]!).filter((inner) => !FORMS.some((form) => form.test(inner)));
}

/**
 * What is wrong with the templates in `text`, one sentence each: a UUID template of a version, variant or spelling
 * that does not exist says which digit is wrong; anything else unknown is "not a template".
 */
export function templateProblems(text: string): string[] {
  return unknownTemplates(text).map((inner) => {
    const uuid = namedUuid(inner);
    return uuid !== null && "problem" in uuid ? uuid.problem : `\`{{${inner}}}\` is not a template`;
  });
}

/** The named UUID templates in `text` (well-formed ones), for the load-time check that one name has one form. */
export function namedUuidsIn(text: string): { readonly name: string; readonly form: UuidForm }[] {
  return [...text.matchAll(TEMPLATE)].flatMap((m) => {
    const uuid = namedUuid(m[1]!);
    return uuid !== null && "form" in uuid ? [uuid] : [];
  });
}

function expand(inner: string, scope: CaseScope, encode: (s: string) => string): string {
  if (inner === "uuid") return randomUUID();
  const uuid = namedUuid(inner);
  if (uuid !== null) {
    if ("problem" in uuid) throw new TemplateError(uuid.problem);
    return scope.uuid(uuid.name, uuid.form);
  }
  if (inner.startsWith("capture:")) {
    const captured = scope.lookup(inner.slice(8));
    if (!captured.found) throw new TemplateError(`\`{{${inner}}}\`: nothing was captured under that name by an earlier step`);
    const value = captured.value;
    return encode(typeof value === "string" ? value : JSON.stringify(value));
  }
  const shift = /^now(?:([+-])([0-9]+))?$/.exec(inner);
  if (shift) {
    const seconds = shift[1] === undefined ? 0 : Number(shift[2]) * (shift[1] === "-" ? -1 : 1);
    return new Date(scope.now().getTime() + seconds * 1000).toISOString();
  }
  throw new TemplateError(`\`{{${inner}}}\` is not a template; known: ${KNOWN}`);
}

/** A string with its templates expanded; in a path, captured values are percent-encoded (one path segment stays one). */
export function resolveString(text: string, scope: CaseScope, context: "path" | "text" = "text"): string {
  const encode = context === "path" ? encodeURIComponent : (s: string) => s;
  return text.replace(TEMPLATE, (_all, inner: string) => expand(inner, scope, encode));
}

/**
 * A body with its templates resolved: a string that is exactly `{{capture:NAME}}` becomes the captured JSON value;
 * `{"$with": {value, set?, remove?}}` becomes a copy of `value` with `set` (pointer -> value) and `remove`
 * (pointers) applied.
 * @throws TemplateError
 */
export function resolveValue(value: unknown, scope: CaseScope): unknown {
  if (typeof value === "string") {
    const whole = WHOLE_CAPTURE.exec(value);
    if (whole) {
      const captured = scope.lookup(whole[1]!);
      if (!captured.found) throw new TemplateError(`\`${value}\`: nothing was captured under that name by an earlier step`);
      return structuredClone(captured.value);
    }
    return resolveString(value, scope);
  }
  if (Array.isArray(value)) return value.map((v) => resolveValue(v, scope));
  if (!isPlainObject(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === "$with") {
    const spec = value["$with"];
    if (!isPlainObject(spec) || !Object.hasOwn(spec, "value")) throw new TemplateError("`$with` takes an object {value, set?, remove?}");
    const set = resolveValue(spec["set"] ?? {}, scope);
    const remove = spec["remove"] ?? [];
    if (!isPlainObject(set) || !Array.isArray(remove) || !remove.every((r) => typeof r === "string")) {
      throw new TemplateError("`$with`: `set` must map JSON pointers to values and `remove` list JSON pointers");
    }
    try {
      return withChanges(resolveValue(spec["value"], scope), set, remove as string[]);
    } catch (e) {
      if (e instanceof PointerError) throw new TemplateError(`\`$with\`: ${e.message}`);
      throw e;
    }
  }
  const out: Record<string, unknown> = {};
  for (const key of keys)
    Object.defineProperty(out, key, { value: resolveValue(value[key], scope), enumerable: true, writable: true, configurable: true });
  return out;
}

/** Every string inside `value` (keys included), for load-time template checks. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (isPlainObject(value)) return Object.entries(value).flatMap(([k, v]) => [k, ...stringsIn(v)]);
  return [];
}
