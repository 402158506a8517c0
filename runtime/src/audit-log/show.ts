/** User input for a message: strings as they are, anything else as JSON, at most 80 characters. */
export function show(value: unknown): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
