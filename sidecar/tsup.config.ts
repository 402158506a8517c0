import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/main.ts"],
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
});
