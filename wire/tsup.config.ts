import { defineConfig } from "tsup";

export default defineConfig({
  // `@writ/wire/constants`: the fixed strings alone, which load no TypeBox (the runtime bundles them from there).
  entry: ["src/index.ts", "src/constants.ts"],
  format: ["esm"],
  target: "node20",
  dts: true,
  clean: true,
  sourcemap: true,
  // TypeBox is hundreds of small modules: bundled, only the builders used are loaded, from one file, which keeps the
  // sidecar's start fast. Its types are still the `typebox` dependency's.
  noExternal: ["typebox"],
});
