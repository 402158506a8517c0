/** README.md, "For policy authors": the author's commands, in order, in a fresh clone. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { withClone } from "../clone.js";
import type { Scenario } from "../types.js";

const AUTHOR = { file: "README.md", opens: "npm run build" };

export const author: Scenario = {
  title: "README.md, For policy authors: check, compile, test, eval, fmt, typegen, keygen, a signed compile, verify, diff",
  blocks: [AUTHOR],
  run: () =>
    withClone(async (clone) => {
      const { where, stdout } = await clone.block(AUTHOR, {
        substitutions: [
          {
            from: "npm run build ",
            to: ":             ",
            why: "the tree is built (npm test builds before it tests): building again here would rewrite the dist/ other tests run",
          },
        ],
        // The last command, `writ diff`, exits 1: the two versions decide differently (README: exit codes).
        exit: 1,
      });
      expect(stdout, `${where}: writ eval of examples/payments.transfer-signals.json`).toMatch(/^verdict: approve$/m);
      expect(stdout, `${where}: writ verify of the signed bundle`).toMatch(/^bundle payments\.transfer@1\.2\.0: verified /m);
      expect(stdout.trimEnd().split("\n").at(-1), `${where}: writ diff, the last command`).toBe("different");
      expect(
        existsSync(join(clone.dir, "policies/payments.transfer/1.2.0/bundle.sig")),
        `${where}: writ compile --sign-key signs the bundles`,
      ).toBe(true);
      expect(readFileSync(join(clone.dir, "src/writ-policies.ts"), "utf8"), `${where}: writ typegen`).toContain(
        "export interface WritPolicies",
      );
    }),
};
