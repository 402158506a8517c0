/**
 * Semantic versions (docs/language.md "Versions"): SemVer 2.0.0 text, parsed by the `semver` package in its strict
 * mode, which follows the specification's grammar (no leading zeros, no empty identifiers), with what it tolerates
 * beyond it refused here: a leading `v` or `=`, surrounding whitespace, and numeric identifiers beyond 2^53 - 1 (which
 * it refuses in the core and reads as text in a pre-release, where SemVer compares them as numbers: writ refuses them
 * rather than compare a number as text, or compute with one a double cannot hold). One definition
 * serves the compiler (version literals, E511) and the runtime (the schema's `format: semver`, VAL-013).
 *
 * A version compares by precedence as its *key*, a bigint that orders as SemVer 2.0.0 section 11 orders versions and
 * leaves build metadata out, so the comparison operators of the table compare keys with `<` and `===` as they compare
 * instants; a property test checks the order against `semver.compare`.
 */
import semver from "semver";

/** The longest version the `semver` package reads. */
export const MAX_VERSION_LENGTH = 256;

/** The parts of a version that decide its precedence, or null when `s` is not a SemVer 2.0.0 version writ accepts. */
function parse(s: string): semver.SemVer | null {
  const v = semver.parse(s, { loose: false });
  if (v === null) return null;
  const text = v.build.length > 0 ? `${v.version}+${v.build.join(".")}` : v.version;
  if (text !== s) return null;
  for (const id of v.prerelease) if (typeof id === "string" && /^\d+$/.test(id) && Number(id) > Number.MAX_SAFE_INTEGER) return null;
  return v;
}

/**
 * A pre-release identifier as SemVer compares it: a number when it is all digits. The package reads 9007199254740991
 * itself as text (it keeps numbers below 2^53 - 1 only); SemVer compares it as the number it is.
 */
function identifier(id: string | number): string | number {
  return typeof id === "string" && /^\d+$/.test(id) ? Number(id) : id;
}

export function isSemver(s: string): boolean {
  return parse(s) !== null;
}

/**
 * The key's bytes, big-endian: the core's three numbers (7 bytes each, 53 bits), then 0xff for a release, which
 * follows every pre-release of its core; or 0x01 and each pre-release identifier: a number as 0x01 and 7 bytes, a word
 * as 0x02, its characters and 0x00, so numbers precede words, words compare as ASCII, and a list that is a prefix of
 * another precedes it. Keys are padded with zero bytes to one length, so a longer key is not greater for its length.
 */
const KEY_BYTES = 3 * 7 + 1 + 4 * MAX_VERSION_LENGTH;

export function semverKey(s: string): bigint | null {
  const v = parse(s);
  if (v === null) return null;
  let hex = number(v.major) + number(v.minor) + number(v.patch);
  if (v.prerelease.length === 0) hex += "ff";
  else {
    hex += "01";
    for (const id of v.prerelease.map(identifier)) {
      if (typeof id === "number") hex += `01${number(id)}`;
      else {
        hex += "02";
        for (let i = 0; i < id.length; i++) hex += id.charCodeAt(i).toString(16).padStart(2, "0");
        hex += "00";
      }
    }
  }
  return BigInt(`0x${hex}`) << BigInt(4 * (2 * KEY_BYTES - hex.length));
}

function number(n: number): string {
  return n.toString(16).padStart(14, "0");
}
