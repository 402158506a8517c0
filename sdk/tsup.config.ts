import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  // CommonJS too, for `require("@writ/sdk")`: it requires @writ/runtime and @writ/wire, which are ESM (Node >= 20.19 loads them).
  format: ["esm", "cjs"],
  target: "node20",
  dts: true,
  clean: true,
  sourcemap: true,
});
