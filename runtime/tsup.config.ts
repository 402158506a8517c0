import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/lmdb.ts", "src/replay-store.ts", "src/testing.ts"],
  format: ["esm"],
  target: "node20",
  // The fixed strings of the wire format (`@writ/wire/constants`, a devDependency) are bundled from wire's sources (the
  // root tsconfig.json maps @writ/* to them), so the package installs alone; so are their types and the wire's types
  // (`@writ/wire/types`, which need `typebox`, a dependency for them alone), which need the root's baseUrl: tsup's
  // declaration build would resolve the paths from this folder.
  dts: { compilerOptions: { baseUrl: ".." } },
  clean: true,
  sourcemap: true,
});
