/**
 * Text from a bundle or a bundle source as a message shows it. A remote source is not trusted until its signatures
 * verify, and its names reach error messages before they do (an unknown member of `index.json`, a file name in an
 * archive); those messages go to `/health`, the admin routes and the logs. Shown whole, a name of megabytes would
 * make each of them megabytes.
 *
 * INVARIANT (bounded messages): every name or value from a bundle or a source enters a message through `shown`, so
 * it adds at most MAX_SHOWN_CHARACTERS plus a short suffix; a whole message passed through `shown(text,
 * MAX_MESSAGE_CHARACTERS)` (as the sidecar does with what it reports) is bounded whatever it holds.
 */

/** The most characters of one name or value a message shows. */
export const MAX_SHOWN_CHARACTERS = 200;

/** The most characters of a whole message reported to an operator (`/health`, the admin routes, a log line). */
export const MAX_MESSAGE_CHARACTERS = 1000;

/**
 * `text` whole when it has at most `max` characters (UTF-16 code units), else its first `max` (one fewer rather than
 * half of a surrogate pair), `…`, and how long it was: `aaaa… (3145728 characters)`.
 */
export function shown(text: string, max = MAX_SHOWN_CHARACTERS): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}… (${text.length} characters)`;
}

/** A parsed JSON value as a message shows it: a string as it is, anything else as JSON, each through `shown`. */
export function shownValue(value: unknown): string {
  return shown(typeof value === "string" ? value : (JSON.stringify(value) ?? String(value)));
}
