/** RFC 6901 JSON pointers: reading a value, and the copy-with-changes the `$with` request operator builds. */

export class PointerError extends Error {
  override readonly name = "PointerError";
}

/** The reference tokens of `pointer` (`""` is the whole document). @throws PointerError */
export function tokensOf(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new PointerError(`\`${pointer}\` is not a JSON pointer: it must be empty or start with \`/\``);
  return pointer
    .slice(1)
    .split("/")
    .map((token) => {
      if (/~[^01]|~$/.test(token)) throw new PointerError(`\`${pointer}\` has an invalid escape: only ~0 and ~1 are defined`);
      return token.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return typeof value === "object" && value !== null;
}

function child(value: unknown, token: string): { found: true; value: unknown } | { found: false } {
  if (Array.isArray(value)) {
    if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= value.length) return { found: false };
    return { found: true, value: value[Number(token)] };
  }
  if (isContainer(value) && Object.hasOwn(value, token)) return { found: true, value: (value as Record<string, unknown>)[token] };
  return { found: false };
}

/** The value at `pointer`, or `{found: false}`. @throws PointerError for a malformed pointer */
export function resolvePointer(document: unknown, pointer: string): { found: true; value: unknown } | { found: false } {
  let current: { found: true; value: unknown } | { found: false } = { found: true, value: document };
  for (const token of tokensOf(pointer)) {
    if (!current.found) return current;
    current = child(current.value, token);
  }
  return current;
}

/** `token` appended to `pointer`, escaped. */
export function appendPointer(pointer: string, token: string | number): string {
  return `${pointer}/${String(token).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/** The pointer of `tokens` (the inverse of `tokensOf`). */
export function pointerOf(tokens: readonly string[]): string {
  return tokens.reduce<string>((pointer, token) => appendPointer(pointer, token), "");
}

function clone<T>(value: T): T {
  return structuredClone(value);
}

/**
 * A deep copy of `document` with each `set` pointer given its value (the parent must exist; an object member is
 * added or replaced, an array element replaced) and each `remove` pointer deleted (it must exist).
 * @throws PointerError naming the pointer that cannot be applied
 */
export function withChanges(document: unknown, set: Readonly<Record<string, unknown>>, remove: readonly string[]): unknown {
  let out = clone(document);
  for (const [pointer, value] of Object.entries(set)) {
    const tokens = tokensOf(pointer);
    if (tokens.length === 0) {
      out = clone(value);
      continue;
    }
    const parent = resolvePointer(out, pointerOf(tokens.slice(0, -1)));
    const last = tokens.at(-1)!;
    if (!parent.found || !isContainer(parent.value)) throw new PointerError(`cannot set \`${pointer}\`: its parent does not exist`);
    if (Array.isArray(parent.value)) {
      if (!child(parent.value, last).found) throw new PointerError(`cannot set \`${pointer}\`: no such array element`);
      parent.value[Number(last)] = clone(value);
    } else {
      Object.defineProperty(parent.value, last, { value: clone(value), enumerable: true, writable: true, configurable: true });
    }
  }
  for (const pointer of remove) {
    const tokens = tokensOf(pointer);
    if (tokens.length === 0) throw new PointerError("cannot remove the whole document");
    const parent = resolvePointer(out, pointerOf(tokens.slice(0, -1)));
    const last = tokens.at(-1)!;
    if (!parent.found || !child(parent.value, last).found) throw new PointerError(`cannot remove \`${pointer}\`: it does not exist`);
    if (Array.isArray(parent.value)) parent.value.splice(Number(last), 1);
    else delete (parent.value as Record<string, unknown>)[last];
  }
  return out;
}
