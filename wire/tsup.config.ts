import { defineConfig } from "tsup";

export default defineConfig({
  // `@writ/wire/constants`: the fixed strings alone, which load no TypeBox (the runtime bundles them from there);
  // `@writ/wire/types`: the types alone, which the runtime imports with `import type`.
  entry: ["src/index.ts", "src/constants.ts", "src/types.ts"],
  format: ["esm"],
  target: "node20",
  // The declaration bundler would write the types entry's `export type *` as an `export` of values too, which its
  // empty module does not have: that entry's declaration is the package's types.d.ts, written by hand.
  dts: { entry: ["src/index.ts", "src/constants.ts"] },
  clean: true,
  sourcemap: true,
  // TypeBox is hundreds of small modules: bundled, only the builders used are loaded, from one file, which keeps the
  // sidecar's start fast. Its types are still the `typebox` dependency's.
  noExternal: ["typebox"],
});
