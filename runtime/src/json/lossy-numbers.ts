/**
 * The numbers of a parsed document whose text a double does not carry (exact-number.ts), by the object or array that
 * holds them and the member's key: the strict parser records them, signal validation refuses them (VAL-007, VAL-008,
 * VAL-012) instead of deciding on a value the client did not send. Held weakly, so a document forgets them with itself.
 */
const LOSSY = new WeakMap<object, Map<string, string>>();

export function recordLossyNumber(container: object, key: string, text: string): void {
  let texts = LOSSY.get(container);
  if (texts === undefined) LOSSY.set(container, (texts = new Map()));
  texts.set(key, text);
}

/** The texts of the lossy numbers `container` holds, by key; undefined when it holds none (or was not parsed strictly). */
export function lossyNumbersOf(container: object): ReadonlyMap<string, string> | undefined {
  return LOSSY.get(container);
}

/** Records in `to` the lossy numbers of `from` whose keys `keep` accepts: for an object built from parsed ones. */
export function copyLossyNumbers(from: object, to: object, keep: (key: string) => boolean): void {
  for (const [key, text] of LOSSY.get(from) ?? []) if (keep(key)) recordLossyNumber(to, key, text);
}
