/**
 * The sidecar `npm start` runs (docs/sidecar.md): a first decision with curl (docs/sidecar.md), a Surface B execution
 * (docs/surface-b.md), then, once it is stopped, the compaction of its data dir (docs/sidecar.md, "Compaction").
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { withClone } from "../clone.js";
import { jsonValues } from "../http.js";
import { sidecarPorts } from "../ports.js";
import type { Scenario } from "../types.js";

const FIRST_DECISION = { file: "docs/sidecar.md", opens: "API_KEY=$(cat .writ/data/api-key)" };
const SURFACE_B = { file: "docs/surface-b.md", opens: "API_KEY=$(cat .writ/data/api-key)" };
const COMPACT = { file: "docs/sidecar.md", opens: "npx writ-sidecar compact /var/lib/writ" };

/** What `npm start` runs once it has built (test/start.test.ts runs `npm start` itself). */
const NPM_START = "node compiler/dist/cli.js compile policies\nnode sidecar/dist/main.js --dev\n";

export const devSidecar: Scenario = {
  title: "docs/sidecar.md and docs/surface-b.md: curl against npm start's sidecar, then writ-sidecar compact of its data dir",
  blocks: [FIRST_DECISION, SURFACE_B, COMPACT],
  run: () =>
    withClone(async (clone) => {
      const ports = await sidecarPorts();
      const sidecar = await clone.script("npm start's sidecar", NPM_START, {
        env: ports.env,
        services: [{ command: "node sidecar/dist/main.js --dev", ready: `http://127.0.0.1:${ports.a}/health?probe=ready` }],
      });

      const first = await clone.block(FIRST_DECISION, {
        substitutions: [
          {
            from: "localhost:8080",
            to: `localhost:${ports.a}`,
            why: "the sidecar listens on a free port: 8080 may be taken on a test machine",
          },
        ],
      });
      const [health, decision] = jsonValues(first.stdout) as [
        { status?: string },
        { status?: string; attestation?: { executionId?: string } },
      ];
      const request = JSON.parse(readFileSync(join(clone.dir, "examples/evaluate-request.json"), "utf8")) as { executionId: string };
      expect(health?.status, `${first.where}: GET /health answered ${first.stdout}`).toBe("ok");
      expect(decision?.status, `${first.where}: POST /evaluate of examples/evaluate-request.json answered ${first.stdout}`).toBe(
        "approved",
      );
      expect(decision?.attestation?.executionId, `${first.where}: the attestation's executionId`).toBe(request.executionId);

      const execute = await clone.block(SURFACE_B, {
        substitutions: [
          {
            from: "localhost:8081",
            to: `localhost:${ports.b}`,
            why: "Surface B listens on a free port: 8081 may be taken on a test machine",
          },
        ],
      });
      const [record] = jsonValues(execute.stdout) as [{ execution?: { status?: string }; verification?: { status?: string } }];
      expect(
        record?.execution?.status,
        `${execute.where}: POST /execute of examples/execute-transaction.json answered ${execute.stdout}`,
      ).toBe("approved");
      expect(record?.verification?.status, `${execute.where}: the Trust Record's verification`).toBe("VERIFIED");

      await sidecar.stop();
      const compact = await clone.block(COMPACT, {
        substitutions: [{ from: "/var/lib/writ", to: ".writ/data", why: "the data dir of npm start's sidecar above, now stopped" }],
      });
      expect(compact.stdout, `${compact.where}: compact prints the size before and after`).toMatch(
        /^writ-sidecar: compacted .*data\.mdb: \d+ to \d+ bytes$/m,
      );
    }),
};
