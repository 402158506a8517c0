import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  // CommonJS too, for `require("@writ/sdk")`: it requires @noble/curves, which is ESM (Node >= 20.19 loads it).
  format: ["esm", "cjs"],
  target: "node20",
  // The SDK installs alone (docs/sdk.md, "Install"): @writ/runtime and @writ/wire are bundled from their sources (the
  // root tsconfig.json maps @writ/* to them), their dependencies are this package's, and so are their types, which
  // need the root's baseUrl: tsup's declaration build would resolve the paths from this folder and leave them imports.
  // typebox stays a dependency for the types alone: the wire types are TypeBox `Static`s; no JavaScript loads it.
  noExternal: [/^@writ\//],
  dts: { compilerOptions: { baseUrl: ".." } },
  clean: true,
  sourcemap: true,
});
