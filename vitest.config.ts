import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      // Before "@writ/runtime", which would also match it as a prefix.
      "@writ/runtime/lmdb": here("./runtime/src/lmdb.ts"),
      "@writ/runtime/postgres": here("./runtime/src/postgres.ts"),
      "@writ/runtime": here("./runtime/src/index.ts"),
      "@writ/wire": here("./wire/src/index.ts"),
      "@writ/compiler": here("./compiler/src/index.ts"),
      "@writ/language-server": here("./language-server/src/index.ts"),
      "@writ/sidecar": here("./sidecar/src/index.ts"),
      "@writ/sdk": here("./sdk/src/index.ts"),
      "@writ/conformance": here("./conformance/src/index.ts"),
    },
  },
  test: {
    include: ["runtime/test/**/*.test.ts", "compiler/test/**/*.test.ts", "language-server/test/**/*.test.ts", "editors/vscode/test/**/*.test.ts", "playground/test/**/*.test.ts", "sidecar/test/**/*.test.ts", "sdk/test/**/*.test.ts", "conformance/test/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
