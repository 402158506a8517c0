/**
 * Docs that run: every shell block of README.md and docs/*.md is run as a user would run it, in a fresh
 * clone with bash (`-euo pipefail`), or skipped with a reason (test/docs-snippets/skipped.ts). The substitutions a run
 * needs (ports, the bundle source's URL, paths under /run and /var, `…` placeholders, the database) are one table per
 * block in test/docs-snippets/scenarios/, and a substitution whose text left the doc fails the test: the docs cannot
 * drift away from what is run. Sidecars are run in the background, waited for, checked, and stopped with SIGTERM.
 */
import { describe, expect, it } from "vitest";
import { postgresUnavailable } from "./support/postgres.js";
import { coverageProblems } from "./docs-snippets/coverage.js";
import { shellBlocks, shellBlocksOf } from "./docs-snippets/markdown.js";
import { SCENARIOS } from "./docs-snippets/scenarios/index.js";
import { substitute } from "./docs-snippets/script.js";
import { SKIPPED } from "./docs-snippets/skipped.js";

/** A scenario starts several processes on a shared 2-core machine: generous, and no check depends on it. */
const SCENARIO_TIMEOUT_MS = 300_000;

describe("the shell blocks of README.md and docs/*.md", () => {
  it("are each run by a scenario or skipped with a reason", () => {
    const problems = coverageProblems(
      shellBlocks(),
      SKIPPED,
      SCENARIOS.flatMap((s) => s.blocks),
    );
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("a block added without a decision fails, naming its file and line", () => {
    const blocks = shellBlocksOf("docs/new.md", "# New\n\ntext\n\n```sh\nnpx writ frobnicate\n```\n");
    expect(coverageProblems(blocks, [], [])).toEqual([
      "docs/new.md:5: shell block `npx writ frobnicate` is neither run nor skipped: add it to a scenario of test/docs-snippets/scenarios, or to test/docs-snippets/skipped.ts with the reason",
    ]);
  });

  it("a substitution whose text left the doc fails, naming the block", () => {
    const [block] = shellBlocksOf("README.md", "```sh\ncurl -s localhost:9090/health\n```\n");
    expect(() => substitute(block!, [{ from: "localhost:8080", to: "localhost:1", why: "a free port" }])).toThrow(
      "README.md:1: the test replaces `localhost:8080` (a free port), which is no longer in the block: the docs changed, update its table in test/docs-snippets/scenarios",
    );
  });
});

const postgres = await postgresUnavailable().then(
  (why) => ({ why, error: null }),
  (error: unknown) => ({ why: null, error }),
);

describe.concurrent("the docs, run", () => {
  for (const scenario of SCENARIOS) {
    if (scenario.postgres === true && postgres.why !== null) {
      it.skip(`${scenario.title}: ${postgres.why}`, () => undefined);
      continue;
    }
    it(
      scenario.title,
      async () => {
        if (scenario.postgres === true && postgres.error !== null) throw postgres.error;
        await scenario.run();
      },
      SCENARIO_TIMEOUT_MS,
    );
  }
});
