import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/lmdb.ts", "src/postgres.ts"],
  format: ["esm"],
  target: "node20",
  dts: true,
  clean: true,
  sourcemap: true,
});
