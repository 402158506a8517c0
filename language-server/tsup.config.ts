import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/cli.ts"],
  format: ["esm"],
  target: "node20",
  // Its declarations from the compiler's sources too (the root's baseUrl), never from a compiler/dist that a build
  // running beside this one may not have written yet.
  dts: { entry: "src/index.ts", compilerOptions: { baseUrl: ".." } },
  clean: true,
  sourcemap: true,
  // The language server installs alone: @writ/compiler (and the @writ/runtime it uses) is bundled from its sources (the
  // root tsconfig.json maps @writ/* to them), and the dependencies of the part it uses are this package's.
  noExternal: [/^@writ\//],
});
