/**
 * The replay store's in-memory map of the fingerprints it holds (docs/replay.md, "The fingerprint set"): each stored
 * entry's fingerprint, as a 64-bit hash, with where the entry is (a location: a number from 1 to 2^32 − 1). A
 * fingerprint the set does not hold has no entry, so the store writes a new one without reading anything first; one it
 * holds is read at its location(s) and compared in full there.
 *
 * INVARIANT (no false negative): a fingerprint with an entry the set's owner can see has its hash in the set with the
 * entry's location. False positives are allowed (two fingerprints of one hash, an entry removed by another process, a
 * write that failed): the entry read at the location then says the fingerprint is not there. The layout (256 shards,
 * each an open-addressing table in one Uint32Array, grown alone so a growth rehashes a 256th of the set, never all of
 * it on the event loop) and its memory: docs/replay.md; its time: docs/benchmarks.md, "The replay check in memory".
 */
import { createHash } from "node:crypto";

const SHARDS = 256;
const WORDS = 3;
const MAX_LOAD = 0.8;
const GROWN_LOAD = 0.6;
const MIN_SLOTS = 64;

/** The 64-bit hash of a fingerprint as two unsigned 32-bit words. */
export interface FingerprintHash {
  readonly hi: number;
  readonly lo: number;
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * A fingerprint's hash: its first 64 bits when it is lowercase SHA-256 hex (every fingerprint writ makes: a hash
 * already, of a domain-separated text no caller chooses the digest of), else the first 64 bits of its SHA-256.
 */
export function fingerprintHash(fingerprint: string): FingerprintHash {
  if (HEX_SHA256.test(fingerprint)) {
    return { hi: Number.parseInt(fingerprint.slice(0, 8), 16), lo: Number.parseInt(fingerprint.slice(8, 16), 16) };
  }
  const digest = createHash("sha256").update(fingerprint, "utf8").digest();
  return { hi: digest.readUInt32BE(0), lo: digest.readUInt32BE(4) };
}

class Shard {
  slots: Uint32Array;
  count = 0;

  constructor(capacity: number) {
    this.slots = new Uint32Array(Math.max(MIN_SLOTS, capacity) * WORDS);
  }

  get capacity(): number {
    return this.slots.length / WORDS;
  }

  /** The first slot probed for `lo` (multiply-shift onto the capacity: the hash is uniform). */
  #home(lo: number): number {
    return Math.floor((lo / 0x1_0000_0000) * this.capacity);
  }

  add(hi: number, lo: number, location: number): void {
    if ((this.count + 1) / this.capacity > MAX_LOAD) this.#grow();
    const capacity = this.capacity;
    for (let i = this.#home(lo); ; i = i + 1 === capacity ? 0 : i + 1) {
      const at = i * WORDS;
      const held = this.slots[at + 2]!;
      if (held === 0) {
        this.slots[at] = hi;
        this.slots[at + 1] = lo;
        this.slots[at + 2] = location;
        this.count += 1;
        return;
      }
      if (held === location && this.slots[at] === hi && this.slots[at + 1] === lo) return;
    }
  }

  find(hi: number, lo: number, into: number[]): void {
    const capacity = this.capacity;
    for (let i = this.#home(lo); ; i = i + 1 === capacity ? 0 : i + 1) {
      const at = i * WORDS;
      const held = this.slots[at + 2]!;
      if (held === 0) return;
      if (this.slots[at] === hi && this.slots[at + 1] === lo) into.push(held);
    }
  }

  /** Removes the slot of (`hi`, `lo`, `location`), shifting back the slots of its run (no tombstones). */
  remove(hi: number, lo: number, location: number): boolean {
    const capacity = this.capacity;
    let i = this.#home(lo);
    for (; ; i = i + 1 === capacity ? 0 : i + 1) {
      const at = i * WORDS;
      const held = this.slots[at + 2]!;
      if (held === 0) return false;
      if (held === location && this.slots[at] === hi && this.slots[at + 1] === lo) break;
    }
    // Backward-shift deletion: a later slot of the run moves into the hole when its home is not between the hole and it.
    let hole = i;
    for (let j = i + 1 === capacity ? 0 : i + 1; ; j = j + 1 === capacity ? 0 : j + 1) {
      const at = j * WORDS;
      if (this.slots[at + 2] === 0) break;
      const home = this.#home(this.slots[at + 1]!);
      const between = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (!between) {
        this.slots.copyWithin(hole * WORDS, at, at + WORDS);
        hole = j;
      }
    }
    this.slots.fill(0, hole * WORDS, hole * WORDS + WORDS);
    this.count -= 1;
    return true;
  }

  #grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(Math.max(MIN_SLOTS, Math.ceil((this.count + 1) / GROWN_LOAD)) * WORDS);
    this.count = 0;
    for (let at = 0; at < old.length; at += WORDS) {
      if (old[at + 2] !== 0) this.add(old[at]!, old[at + 1]!, old[at + 2]!);
    }
  }
}

export class FingerprintSet {
  readonly #shards: Shard[];

  /** @param expected fingerprints expected (a rebuild's count): each shard is sized for its share at a load of 0.6. */
  constructor(expected = 0) {
    const perShard = Math.ceil(expected / SHARDS / GROWN_LOAD);
    this.#shards = Array.from({ length: SHARDS }, () => new Shard(perShard));
  }

  /** Adds a location of `hash`; adding one it already has does nothing. */
  add(hash: FingerprintHash, location: number): void {
    checkLocation(location);
    this.#shards[hash.hi >>> 24]!.add(hash.hi, hash.lo, location);
  }

  /** Every location held for `hash` (usually none or one). */
  find(hash: FingerprintHash): number[] {
    const into: number[] = [];
    this.#shards[hash.hi >>> 24]!.find(hash.hi, hash.lo, into);
    return into;
  }

  /** Removes one location of `hash`; true when it was there. */
  remove(hash: FingerprintHash, location: number): boolean {
    return this.#shards[hash.hi >>> 24]!.remove(hash.hi, hash.lo, location);
  }

  /** Locations held. */
  get size(): number {
    return this.#shards.reduce((sum, shard) => sum + shard.count, 0);
  }

  /** Bytes of the slot arrays: what the set takes in memory. */
  get bytes(): number {
    return this.#shards.reduce((sum, shard) => sum + shard.slots.byteLength, 0);
  }
}

function checkLocation(location: number): void {
  if (!Number.isInteger(location) || location < 1 || location > 0xffff_ffff) {
    throw new RangeError(`a fingerprint set location is an integer from 1 to 2^32 - 1, not ${location}`);
  }
}
