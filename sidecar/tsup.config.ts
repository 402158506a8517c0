import { copyFile, mkdir, readdir } from "node:fs/promises";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "tsup";

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig((cli) => ({
  // The signing threads' script is a file of its own (signing/pool.ts SIGNING_THREAD_SCRIPT), beside the chunks.
  entry: { index: "src/index.ts", main: "src/main.ts", "signing-worker": "src/signing/worker.ts" },
  format: ["esm"],
  target: "node20",
  // The sidecar installs alone: @writ/runtime and @writ/wire are bundled from their sources (the root tsconfig.json
  // maps @writ/* to them), their dependencies are this package's, and so are their types, which need the root's
  // baseUrl: tsup's declaration build would resolve the paths from this folder and leave them imports. TypeBox is
  // bundled as @writ/wire bundles it (one file loads faster than its hundreds of modules); the dependency is for the types.
  noExternal: [/^@writ\//, "typebox"],
  dts: { entry: "src/index.ts", compilerOptions: { baseUrl: ".." } },
  clean: true,
  sourcemap: true,
  // The PostgreSQL migrations' SQL files, which storage/postgres/migrations.ts reads relative to its module: from
  // <outDir>/migrations/ once bundled (every chunk is in the output folder itself).
  onSuccess: async () => {
    const from = here("./src/storage/postgres/migrations/");
    const to = resolve(cli.outDir ?? here("./dist/"), "migrations");
    await mkdir(to, { recursive: true });
    for (const file of await readdir(from)) if (file.endsWith(".sql")) await copyFile(resolve(from, file), resolve(to, file));
  },
}));
