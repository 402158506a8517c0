/**
 * Calendar fields in a named zone (docs/language.md "Calendar fields in a zone"). The compiler embeds each zone a
 * policy uses as a table of UTC-offset transitions over a stated horizon (`IrZones`), so `bundle_hash` pins them and a
 * runtime needs no time-zone database: the offset of an instant is found by binary search, the local time is the
 * instant plus its offset, and the fields are read from that. An instant outside the horizon has no offset the bundle
 * states: a fault (EVAL-004), never a guess. A table that is malformed is refused when the IR is prepared.
 */
import { IrUnsupportedError } from "../errors.js";
import type { IrZones } from "./types.js";

/** The horizon the compiler states by default, in seconds since 1970: 1970-01-01 to 2100-01-01 UTC (docs say why). */
export const ZONE_HORIZON: readonly [number, number] = [0, 4_102_444_800];

/** Offsets beyond ±26 hours are refused: no zone has ever had one, so such a table is corrupt. */
const MAX_OFFSET = 26 * 3600;

/** A zone's table ready for lookups: transition instants and the offsets from them on, both in seconds. */
export interface ZoneTable {
  readonly name: string;
  readonly from: number;
  readonly to: number;
  readonly instants: Float64Array;
  readonly offsets: Float64Array;
}

/**
 * The tables of an IR, checked: the horizon is an interval of whole seconds, each table starts at its start, its
 * instants increase strictly and stay before its end, its offsets are whole seconds within ±26 hours. Throws
 * IrUnsupportedError naming the zone and what is wrong (a bundle is then refused, BUNDLE_INVALID).
 */
export function prepareZones(zones: IrZones | undefined): ReadonlyMap<string, ZoneTable> {
  const tables = new Map<string, ZoneTable>();
  if (zones === undefined) return tables;
  const bad = (why: string): never => {
    throw new IrUnsupportedError(`zone tables ${why}; recompile the policy`);
  };
  if (typeof zones !== "object" || zones === null || typeof zones.tables !== "object" || zones.tables === null) bad("are not an object");
  if (typeof zones.tzdata !== "string" || zones.tzdata === "") bad("do not name their tzdata release");
  const [from, to] = Array.isArray(zones.horizon) ? zones.horizon : [];
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from! >= to!) bad("state no horizon `[from, to]` of whole seconds");
  for (const [name, pairs] of Object.entries(zones.tables)) {
    if (!Array.isArray(pairs) || pairs.length === 0) bad(`for \`${name}\` hold no transitions`);
    const instants = new Float64Array(pairs.length);
    const offsets = new Float64Array(pairs.length);
    pairs.forEach((pair, i) => {
      const [at, offset] = Array.isArray(pair) && pair.length === 2 ? pair : [NaN, NaN];
      if (!Number.isSafeInteger(at) || !Number.isSafeInteger(offset) || Math.abs(offset) > MAX_OFFSET)
        bad(`for \`${name}\` have a malformed pair at ${i}`);
      if (i === 0 ? at !== from : at <= instants[i - 1]! || at >= to!)
        bad(`for \`${name}\` are not sorted within the horizon at ${i} (the first pair is at its start)`);
      instants[i] = at;
      offsets[i] = offset;
    });
    tables.set(name, { name, from: from!, to: to!, instants, offsets });
  }
  return tables;
}

/** The offset, in seconds, of the instant `ms` in the zone; null outside the horizon. Binary search: O(log n). */
export function offsetAt(table: ZoneTable, ms: number): number | null {
  const s = Math.floor(ms / 1000);
  if (s < table.from || s >= table.to) return null;
  const { instants } = table;
  let lo = 0;
  let hi = instants.length - 1;
  // INVARIANT: instants[lo] <= s (instants[0] is the horizon's start); the answer lies in [lo, hi].
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (instants[mid]! <= s) lo = mid;
    else hi = mid - 1;
  }
  return table.offsets[lo]!;
}

/** An offset as `UTC+01:00` (`UTC-00:44:30` when it has seconds), as the explanation writes it. */
export function offsetText(offset: number): string {
  const sign = offset < 0 ? "-" : "+";
  const a = Math.abs(offset);
  const two = (n: number): string => String(n).padStart(2, "0");
  const seconds = a % 60 === 0 ? "" : `:${two(a % 60)}`;
  return `UTC${sign}${two(Math.floor(a / 3600))}:${two(Math.floor(a / 60) % 60)}${seconds}`;
}
