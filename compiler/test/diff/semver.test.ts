/**
 * `writ diff` on `semver` signals: versions ordered by precedence (build metadata aside), cut at every version the
 * conditions name into the versions named and the gaps between them, a gap with no version in it (`1.0.0` to
 * `1.0.1-0`) no region at all; comparisons and `in` lists are decided exactly (issue 41).
 */
import fc from "fast-check";
import { semverKey } from "@writ/runtime";
import { describe, expect, it } from "vitest";
import { semverCells } from "../../src/diff/semver-domain.js";
import { small } from "./support/versions.js";
import { diffOf, expectEnumerated } from "./support/enumerate.js";

const rule = (name: string, condition: string, verdict = "reject") => `rule ${name} when ${condition} ${verdict} "${name}"`;
const on = (a: string, b: string) => diffOf(small("  v?: semver", rule("r", a)), small("  v?: semver", rule("r", b)));

describe("named examples", () => {
  it('`< "2.4.0"` against `< "2.4.0-rc.1"`: the pre-releases from rc.1 on, with such a witness', () => {
    const { diff, pairs } = on('v < "2.4.0"', 'v < "2.4.0-rc.1"');
    expect(pairs).toEqual(["r -> otherwise"]);
    expect(diff.undecided).toEqual([]);
    const key = semverKey(diff.regions[0]!.witness.signals["v"] as string)!;
    expect(key >= semverKey("2.4.0-rc.1")! && key < semverKey("2.4.0")!).toBe(true);
  });

  it("nothing lies between a release and the next patch's first pre-release: `< 1.0.1-0` is `<= 1.0.0`", () => {
    expect(on('v < "1.0.1-0"', 'v <= "1.0.0"').diff).toMatchObject({ result: "equivalent", regions: [], undecided: [] });
    expect(on('v < "1.0.0-alpha.0"', 'v <= "1.0.0-alpha"').diff).toMatchObject({ result: "equivalent", undecided: [] });
    expect(on('v >= "0.0.0-0"', "present(v)").diff).toMatchObject({ result: "equivalent", undecided: [] });
  });

  it("build metadata is no part of precedence: `== 1.0.0+build.5` is `== 1.0.0`", () => {
    expect(on('v == "1.0.0+build.5"', 'v in ["1.0.0"]').diff).toMatchObject({ result: "equivalent", undecided: [] });
  });

  it("a gap with versions in it is a region: `<= 1.0.0` against `< 1.0.1`", () => {
    const { diff, pairs } = on('v <= "1.0.0"', 'v < "1.0.1"');
    expect(pairs).toEqual(["otherwise -> r"]);
    expect(diff.regions[0]!.witness.signals["v"]).toBe("1.0.1-0");
  });
});

describe("versions at the length limit", () => {
  // Nothing with one more identifier follows a 256-character pre-release, so whether a version lies between it and
  // the release is not settled by its successor: the versions are then not cut, their conditions opaque, never equal.
  const long = `1.0.0-${"a".repeat(250)}`;
  it("a gap that can be neither shown empty nor given a version leaves the signal uncut, and the diff not equivalent", () => {
    expect(semverCells([long, "1.0.0"])).toBeNull();
    const { diff } = on(`v <= "${long}"`, 'v < "1.0.0"');
    expect(diff.result).not.toBe("equivalent");
  });
});

describe("against enumeration", () => {
  const pool = [
    "0.0.0-0",
    "0.0.0",
    "1.0.0-0",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-rc.1",
    "1.0.0-rc.1+x.7",
    "1.0.0",
    "1.0.0+build.5",
    "1.0.1-0",
    "1.0.1",
    "1.2.0",
    "1.10.0",
    "2.4.0-rc.1",
    "2.4.0",
  ];
  const list = fc
    .uniqueArray(fc.constantFrom(...pool), { minLength: 1, maxLength: 3 })
    .map((xs) => JSON.stringify(xs).replaceAll(",", ", "));
  const condition = fc.oneof(
    fc.tuple(fc.constantFrom("<", "<=", ">", ">=", "==", "!="), fc.constantFrom(...pool)).map(([op, v]) => `v ${op} "${v}"`),
    list.map((l) => `v in ${l}`),
    list.map((l) => `v not in ${l}`),
  );

  /**
   * Every version of the pool, with build metadata and without, and the least version above each, which lies in the
   * gap above it when that gap holds any; the least version of all, and versions beyond the pool.
   */
  function universe(): Record<string, unknown>[] {
    const versions = new Set<string>(["0.0.0-0", "0.0.0-0.0", "3.0.0", "1.5.0", "1.0.0-beta"]);
    for (const v of pool) {
      const bare = v.split("+")[0]!;
      const [core, pre] = [bare.split("-")[0]!, bare.includes("-") ? bare.slice(bare.indexOf("-") + 1) : null];
      const [x, y, z] = core.split(".").map(Number);
      versions.add(v).add(bare).add(`${bare}+meta`);
      versions.add(pre === null ? `${x}.${y}.${z! + 1}-0` : `${bare}.0`);
    }
    return [{}, ...[...versions].map((v) => ({ v }))];
  }

  it("on generated pairs, the regions are exactly the pairs every version at and beside the pool's shows", () => {
    const requests = universe();
    fc.assert(
      fc.property(fc.array(condition, { minLength: 4, maxLength: 4 }), ([a, b, c, d]) => {
        const rules = (p: string, q: string) => `${rule("p", p)}\n${rule("q", q, "escalate")}`;
        expectEnumerated(small("  v?: semver", rules(a!, b!)), small("  v?: semver", rules(c!, d!)), requests);
      }),
      { numRuns: 60, seed: 41 },
    );
  });

  it("the cells are in order, one per version named (equal precedence counting once) and per gap that holds a version", () => {
    const values = semverCells(pool)!;
    const keys = values.map((v) => semverKey(v)!);
    for (let i = 1; i < keys.length; i++) expect(keys[i - 1]! < keys[i]!).toBe(true);
    // 14 versions of distinct precedence; 13 gaps hold a version: none below the least version, none between 1.0.0
    // and 1.0.1-0, one above the greatest.
    expect(values.slice(0, 4)).toEqual(["0.0.0-0", "0.0.0-1", "0.0.0", "0.0.1"]);
    expect(values.slice(values.indexOf("1.0.0"), values.indexOf("1.0.0") + 2)).toEqual(["1.0.0", "1.0.1-0"]);
    expect(values).toContain("1.0.0-rc.2");
    expect(values).not.toContain("1.0.0+build.5");
    expect(values.length).toBe(14 + 13);
  });
});
