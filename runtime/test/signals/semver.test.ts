/**
 * Versions (runtime/src/signals/semver.ts): exactly SemVer 2.0.0 text is a version, and keys order versions as
 * `semver.compare` does (SemVer 2.0.0 precedence, build metadata ignored), on random versions built to collide.
 */
import fc from "fast-check";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { isSemver, semverKey } from "../../src/index.js";

const number = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant(10), fc.constant(9007199254740991));
/** Not 9007199254740991, which the package compares as text (below). */
const identifier = fc.oneof(
  fc.integer({ min: 0, max: 11 }).map(String),
  fc.constant("9007199254740990"),
  fc.constantFrom("a", "alpha", "alpha1", "beta", "rc", "RC", "-", "a-b", "0a", "z"),
);
const version = fc
  .tuple(
    number,
    number,
    number,
    fc.option(fc.array(identifier, { minLength: 1, maxLength: 4 }), { freq: 2 }),
    fc.option(fc.constantFrom("b", "build.7", "001", "x-y.z"), { freq: 3 }),
  )
  .map(([a, b, c, pre, build]) => `${a}.${b}.${c}${pre ? `-${pre.join(".")}` : ""}${build ? `+${build}` : ""}`);

describe("versions", () => {
  it("order by precedence as semver.compare does, build metadata aside", () => {
    fc.assert(
      fc.property(version, version, (a, b) => {
        const [ka, kb] = [semverKey(a)!, semverKey(b)!];
        const order = semver.compare(a, b);
        expect([ka < kb, ka === kb, ka > kb]).toEqual([order < 0, order === 0, order > 0]);
      }),
      { numRuns: 50_000 },
    );
  });

  it("the specification's own example order holds", () => {
    const ordered = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
    ];
    const keys = ordered.map((v) => semverKey(v)!);
    for (let i = 1; i < keys.length; i++) expect(keys[i - 1]! < keys[i]!).toBe(true);
    expect(semverKey("1.0.0+20130313144700")).toBe(semverKey("1.0.0"));
  });

  it("a pre-release number is a number up to 9007199254740991, which the package alone would compare as text", () => {
    expect(semverKey("1.0.0-9007199254740991")! > semverKey("1.0.0-10")!).toBe(true);
    expect(semverKey("1.0.0-9007199254740991")! < semverKey("1.0.0-a")!).toBe(true);
  });

  it.each([
    ["v1.2.3", "a `v` prefix"],
    ["=1.2.3", "an `=` prefix"],
    [" 1.2.3", "surrounding whitespace"],
    ["1.2", "two numbers"],
    ["01.2.3", "a leading zero"],
    ["1.2.3-01", "a leading zero in a numeric pre-release identifier"],
    ["1.2.3-", "an empty pre-release"],
    ["1.2.3-a..b", "an empty identifier"],
    ["9007199254740992.0.0", "a number beyond 2^53 - 1"],
    ["1.2.3-9007199254740993", "a pre-release number beyond 2^53 - 1"],
    [`1.2.3-${"a".repeat(260)}`, "more than 256 characters"],
  ])("%s is not a version: %s", (text) => {
    expect(isSemver(text)).toBe(false);
    expect(semverKey(text)).toBeNull();
  });

  it("what the package accepts strictly, in its canonical text, is a version", () => {
    fc.assert(
      fc.property(version, (v) => {
        expect(isSemver(v)).toBe(semver.valid(v) !== null);
      }),
    );
  });
});
