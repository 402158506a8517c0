import { semverKey } from "@writ/runtime";

/**
 * Versions as `writ diff` reads them: ordered by precedence, the runtime's key (semver.ts in the runtime, build
 * metadata aside), cut at every version a condition names into cells on which each comparison with them is constant:
 * each version named (with every version of equal precedence) and each gap between two consecutive ones, below the
 * least and above the greatest. A gap may hold no version (nothing lies strictly between `1.0.0` and `1.0.1-0`): it is
 * a cell only when a version is found in it, and it is empty exactly when its upper end is the immediate successor of
 * its lower (`successor`), which is otherwise in it. A gap above a version whose successor is too long to be one, and
 * in which no readable version is found, can be neither shown empty nor given a version: there are then no cells.
 */
interface Version {
  readonly text: string;
  readonly key: bigint;
}

/** One version of each cell, in order of precedence, without build metadata; null when a gap is neither (above). */
export function semverCells(literals: readonly string[]): string[] | null {
  const byKey = new Map<bigint, string>();
  for (const literal of literals) {
    const text = literal.split("+")[0]!;
    const key = semverKey(text);
    if (key !== null && !byKey.has(key)) byKey.set(key, text);
  }
  const points: Version[] = [...byKey].map(([key, text]) => ({ text, key })).sort((a, b) => (a.key < b.key ? -1 : 1));
  const values: string[] = [];
  for (let i = 0; i <= points.length; i++) {
    const [below, above] = [points[i - 1] ?? null, points[i] ?? null];
    const inside = gapVersion(below, above);
    if (inside === "unknown") return null;
    if (inside !== "empty") values.push(inside);
    if (above !== null) values.push(above.text);
  }
  return values;
}

/** A version strictly between `below` and `above` (either may be unbounded), `empty` when none is, `unknown` if not found. */
function gapVersion(below: Version | null, above: Version | null): string | "empty" | "unknown" {
  const within = (text: string): boolean => {
    const key = semverKey(text);
    return key !== null && (below === null || key > below.key) && (above === null || key < above.key);
  };
  const next = below === null ? "0.0.0-0" : successor(below.text);
  const found = [...readable(below, above), ...(next === null ? [] : [next])].find(within);
  if (found !== undefined) return found;
  return next === null && below !== null ? "unknown" : "empty";
}

/**
 * The least version greater than `v`: its pre-release with one more identifier, `0`, the least there is; for a release,
 * the least pre-release of the next core. Null when there is none, or it is too long to be a version.
 */
function successor(v: string): string | null {
  const { core, pre } = parts(v);
  const [x, y, z] = core;
  const candidates = pre !== null ? [`${x}.${y}.${z}-${pre}.0`] : [`${x}.${y}.${z + 1}-0`, `${x}.${y + 1}.0-0`, `${x + 1}.0.0-0`];
  return candidates.find((c) => semverKey(c) !== null) ?? null;
}

/** Versions that read well, likely between `below` and `above`: the next patch, minor and major, the release of a pre-release. */
function readable(below: Version | null, above: Version | null): string[] {
  if (below === null) {
    if (above === null) return ["1.0.0"];
    const [x, y, z] = parts(above.text).core;
    return [`${x}.${y}.${z - 1}`, `${x}.${y - 1}.0`, `${x - 1}.0.0`, "0.0.0"].filter((c) => !c.includes("-"));
  }
  const { core, pre } = parts(below.text);
  const [x, y, z] = core;
  const out = [`${x}.${y}.${z + 1}`, `${x}.${y + 1}.0`, `${x + 1}.0.0`];
  if (pre !== null) {
    const ids = pre.split(".");
    const last = ids.at(-1)!;
    if (/^\d+$/.test(last)) out.unshift(`${x}.${y}.${z}-${[...ids.slice(0, -1), String(Number(last) + 1)].join(".")}`);
    out.push(`${x}.${y}.${z}`);
  }
  return out;
}

function parts(v: string): { core: [number, number, number]; pre: string | null } {
  const dash = v.indexOf("-");
  const core = (dash < 0 ? v : v.slice(0, dash)).split(".").map(Number) as [number, number, number];
  return { core, pre: dash < 0 ? null : v.slice(dash + 1) };
}
