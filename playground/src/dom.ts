/** Builds an element with its class and children; text is always set as text, never parsed as HTML. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string>> | null,
  ...children: readonly (Node | string | null)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) element.setAttribute(name, value);
  for (const child of children) if (child !== null) element.append(child);
  return element;
}

/** The element with this id, which the page (public/index.html) must have. */
export function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no element \`#${id}\``);
  return element as T;
}
