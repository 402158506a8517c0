/**
 * The time-zone database the compiler embeds zone tables from: the JavaScript engine's own ICU, which Node and the
 * browsers keep to a current IANA tz release (docs/language.md "Calendar fields in a zone" says why no npm package).
 * ICU gives the offset of any instant, not the transitions, so they are found by sampling the offset once a day across
 * the horizon and bisecting each change to the second. The names are ICU's list of zones; the release is Node's
 * `process.versions.tz` (`unknown` in a browser, which does not say).
 */
import { ZONE_HORIZON, type IrZones } from "@writ/runtime";
import { suggest } from "../diagnostics/suggest.js";

/** Between two samples a zone changes offset at most once (docs/language.md: checked against hourly samples). */
const STEP = 86_400;
const OFFSET_TEXT = /GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

const formats = new Map<string, Intl.DateTimeFormat>();
const tables = new Map<string, readonly (readonly [number, number])[]>();

/** The tz release the tables come from. */
export function tzdataVersion(): string {
  const versions = (globalThis as { process?: { versions?: Record<string, string | undefined> } }).process?.versions;
  return versions?.tz ?? "unknown";
}

/** The zone names the compiler accepts without a note: ICU's canonical list, and `UTC`. */
export function zoneNames(): readonly string[] {
  return [...Intl.supportedValuesOf("timeZone"), "UTC"];
}

/**
 * Whether `name` names a zone: an IANA name ICU knows (a link such as `Asia/Kolkata` included), spelt with its own case.
 * Null when it does; otherwise the notes that show the fix (the nearest name, or the zone of a city).
 */
export function zoneRefusal(name: string): string[] | null {
  const names = zoneNames();
  if (names.includes(name)) return null;
  const folded = names.find((n) => n.toLowerCase() === name.toLowerCase());
  if (folded !== undefined) return [`write it with its own case: \`${folded}\``];
  if (known(name) && /^[A-Z][A-Za-z0-9_+-]*(\/[A-Z0-9][A-Za-z0-9_+-]*)*$/.test(name)) return null;
  const city = name.trim().replace(/\s+/g, "_").toLowerCase();
  const ofCity = names.filter((n) => n.toLowerCase().endsWith(`/${city}`));
  if (ofCity.length > 0) return [`a zone is named by its region and city: ${ofCity.map((n) => `\`${n}\``).join(", ")}`];
  const near = suggest(name, names);
  return near.length > 0 ? near : ["write an IANA time-zone name, such as `Europe/London`, `America/New_York` or `UTC`"];
}

function known(name: string): boolean {
  try {
    format(name);
    return true;
  } catch {
    return false;
  }
}

function format(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" });
    formats.set(zone, f);
  }
  return f;
}

/** The zone's UTC offset at instant `s`, in seconds. */
export function offsetOf(zone: string, s: number): number {
  const m = OFFSET_TEXT.exec(format(zone).format(s * 1000));
  if (m === null) throw new Error(`ICU wrote no offset for \`${zone}\``);
  if (m[1] === undefined) return 0;
  const magnitude = Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0);
  return m[1] === "-" ? -magnitude : magnitude;
}

/** `[instant, offset]` pairs over `[from, to)`: the offset at `from`, then each change, to the second. */
export function zoneTransitions(
  zone: string,
  [from, to]: readonly [number, number] = ZONE_HORIZON,
): readonly (readonly [number, number])[] {
  const key = `${zone} ${from} ${to}`;
  const cached = tables.get(key);
  if (cached !== undefined) return cached;
  let offset = offsetOf(zone, from);
  const pairs: [number, number][] = [[from, offset]];
  let t = from;
  while (t < to - 1) {
    const next = Math.min(t + STEP, to - 1);
    if (offsetOf(zone, next) === offset) {
      t = next;
      continue;
    }
    // INVARIANT: the offset at lo is `offset`, at hi it is not; halving ends at the second it changes.
    let [lo, hi] = [t, next];
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (offsetOf(zone, mid) === offset) lo = mid;
      else hi = mid;
    }
    offset = offsetOf(zone, hi);
    pairs.push([hi, offset]);
    t = hi;
  }
  tables.set(key, pairs);
  return pairs;
}

/** The `zones` of an IR whose conditions name `names`: each zone's table, by name in sorted order. */
export function zoneTables(names: Iterable<string>): IrZones {
  const sorted = [...new Set(names)].sort();
  return {
    tzdata: tzdataVersion(),
    horizon: ZONE_HORIZON,
    tables: Object.fromEntries(sorted.map((n) => [n, zoneTransitions(n)])),
  };
}
