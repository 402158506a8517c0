/**
 * Every shell block of the docs is either run by a scenario or skipped with a reason: a block added without a decision,
 * a decision whose block is gone, and a block decided twice are each one problem, naming the file and line.
 */
import { names, opening, where } from "./markdown.js";
import type { BlockRef, ShellBlock, Skip } from "./types.js";

export function coverageProblems(blocks: readonly ShellBlock[], skips: readonly Skip[], runs: readonly BlockRef[]): string[] {
  const problems: string[] = [];
  const decisions = [...skips.map((ref) => ({ ref, what: `skipped (${ref.reason})` })), ...runs.map((ref) => ({ ref, what: "run" }))];
  for (const { ref, what } of decisions) {
    const matched = blocks.filter((block) => names(ref, block));
    if (matched.length === 0)
      problems.push(
        `${ref.file}: no shell block opens with \`${ref.opens}\` any more, but the test has it ${what}: update test/docs-snippets`,
      );
    if (matched.length > 1)
      problems.push(`${matched.map(where).join(", ")}: ${matched.length} blocks open with \`${ref.opens}\`; a decision names exactly one`);
  }
  for (const block of blocks) {
    const decided = decisions.filter(({ ref }) => names(ref, block));
    const first = opening(block);
    if (decided.length === 0) {
      problems.push(
        `${where(block)}: shell block \`${first}\` is neither run nor skipped: add it to a scenario of test/docs-snippets/scenarios, or to test/docs-snippets/skipped.ts with the reason`,
      );
    }
    if (decided.length > 1)
      problems.push(
        `${where(block)}: shell block \`${first}\` is decided ${decided.length} times (${decided.map((d) => d.what).join("; ")})`,
      );
  }
  return problems;
}
