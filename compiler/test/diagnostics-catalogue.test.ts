/**
 * docs/language.md lists every diagnostic code and no other, and every code is produced by some golden case
 * (so no code is dead). A new code without docs, or docs for a code that does not exist, fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { DIAGNOSTICS } from "../src/diagnostics/codes.js";

const repo = new URL("../../", import.meta.url).pathname;
const doc = readFileSync(join(repo, "docs/language.md"), "utf8");
const codes = Object.keys(DIAGNOSTICS).sort();

it("documents each code exactly once, under its title", () => {
  const section = doc.slice(doc.indexOf("\n## Diagnostics"));
  expect(section.length).toBeGreaterThan(0);
  const headings = [...section.matchAll(/^### ([EW]\d{3}) (.+)$/gm)].map((m) => [m[1]!, m[2]!.trim()] as const);
  expect(headings.map(([c]) => c).sort()).toEqual(codes);
  for (const [code, title] of headings) expect(title).toBe(DIAGNOSTICS[code as keyof typeof DIAGNOSTICS].title);
});

it("produces every code in some golden case", () => {
  const phases = join(repo, "compiler/test/phases");
  const goldens = readdirSync(phases, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".golden"))
    .map((f) => readFileSync(join(phases, f), "utf8"))
    .join("\n");
  // E801 needs a key whose halves do not match, which no source can cause; bundle.test covers signing.
  const unreachableFromSource = ["E801"];
  const missing = codes.filter((c) => !unreachableFromSource.includes(c) && !goldens.includes(`[${c}]`));
  expect(missing).toEqual([]);
});
