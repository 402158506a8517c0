import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/cli.ts"],
  format: ["esm"],
  target: "node20",
  dts: { entry: "src/index.ts" },
  clean: true,
  sourcemap: true,
  // @writ/conformance stays a package of its own: it finds its case files next to its own dist/.
  external: ["@writ/runtime", "@writ/conformance"],
});
