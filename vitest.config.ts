import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

const TESTS = ["runtime", "compiler", "language-server", "editors/vscode", "playground", "sidecar", "sdk", "conformance", ""].map(
  (dir) => `${dir}${dir && "/"}test/**/*.test.ts`,
);
const STRESS = ["**/*.stress.test.ts", "**/*.volume.test.ts"];
/**
 * Whole programs run as a user runs them, several processes each (the docs' shell blocks, the conformance CLI, the
 * .vsix, built sidecars under races, kills and fleets): about 40% of what was the unit suite's CPU.
 */
const E2E = ["**/*.e2e.test.ts"];

export default defineConfig({
  resolve: {
    alias: {
      // Before "@writ/runtime" and "@writ/wire", which would also match them as a prefix.
      "@writ/runtime/lmdb": here("./runtime/src/lmdb.ts"),
      "@writ/runtime/replay-store": here("./runtime/src/replay-store.ts"),
      "@writ/runtime/testing": here("./runtime/src/testing.ts"),
      "@writ/runtime": here("./runtime/src/index.ts"),
      "@writ/wire/constants": here("./wire/src/constants.ts"),
      "@writ/wire/types": here("./wire/src/types.ts"),
      "@writ/wire": here("./wire/src/index.ts"),
      "@writ/compiler": here("./compiler/src/index.ts"),
      "@writ/language-server": here("./language-server/src/index.ts"),
      "@writ/sidecar": here("./sidecar/src/index.ts"),
      "@writ/sdk": here("./sdk/src/index.ts"),
      "@writ/conformance": here("./conformance/src/index.ts"),
    },
  },
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Vitest's default on 2 cores is 1 worker; most files wait on processes, sockets and disks, so 2 fill the cores.
    maxWorkers: 2,
    projects: [
      // `npm test`: everything but the stress suites, free of wall-clock bounds a busy machine breaks.
      // One module graph per worker (isolate: false): imports were half of the suite's CPU; spies and stubs are restored.
      {
        extends: true,
        test: {
          name: "unit",
          include: TESTS,
          exclude: [...STRESS, ...E2E],
          isolate: false,
          restoreMocks: true,
          unstubEnvs: true,
          unstubGlobals: true,
        },
      },
      // `npm run test:e2e` (.ci/run runs it after `npm test`): the docs' shell blocks in a temporary clone, the conformance
      // CLI and its mutation tests against built sidecars, the VS Code package built and read back, the built sidecar's
      // operations, a replay race over 200 connections, fleets with a bundle source or a second instance.
      { extends: true, test: { name: "e2e", include: E2E } },
      // `npm run test:stress` (.ci/run runs it after `npm test`): suites that SIGKILL, crash, flood or fill processes and
      // disks, hold thousands of connections, pack and install the packages, or store volumes; tens of seconds each,
      // longer on a busy machine, hence their time-outs.
      { extends: true, test: { name: "stress", include: STRESS, testTimeout: 600_000, hookTimeout: 300_000 } },
    ],
  },
});
