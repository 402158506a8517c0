/**
 * Fingerprints by the time they expire, earliest first: a binary min-heap, so that the memory store's `sweep` takes
 * what has expired without looking at anything else (O(log n) per item pushed or taken).
 *
 * Deletion is lazy: an item is pushed each time an entry takes an expiry, and never removed when the entry changes
 * (confirmed, failed again, taken over, expired); whoever takes an item checks it against the entry stored now. So the
 * heap holds at most one item per expiry given since the last sweep, or not yet due: it is bounded by the rate of
 * reservations and failures times their TTL, not by the entries the store has ever held.
 */
export interface ExpiryItem {
  /** Unix ms: the entry's `expiresAt` when the item was pushed. */
  readonly at: number;
  readonly fingerprint: string;
}

export class ExpiryHeap {
  readonly #items: ExpiryItem[] = [];

  get size(): number {
    return this.#items.length;
  }

  push(item: ExpiryItem): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]!.at <= item.at) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = item;
  }

  /** Removes and returns the earliest item when it is due at `now` (`at <= now`); undefined otherwise. */
  takeDue(now: number): ExpiryItem | undefined {
    const items = this.#items;
    const first = items[0];
    if (first === undefined || first.at > now) return undefined;
    const last = items.pop()!;
    if (items.length > 0) {
      // Sift `last` down from the root.
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= items.length) break;
        const right = left + 1;
        const child = right < items.length && items[right]!.at < items[left]!.at ? right : left;
        if (items[child]!.at >= last.at) break;
        items[i] = items[child]!;
        i = child;
      }
      items[i] = last;
    }
    return first;
  }

  clear(): void {
    this.#items.length = 0;
  }
}
