import { existsSync } from "node:fs";
import { cp } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { defineConfig } from "tsup";

const playground = fileURLToPath(new URL("../playground/dist/", import.meta.url));

export default defineConfig({
  entry: ["src/index.ts", "src/cli.ts"],
  format: ["esm"],
  target: "node20",
  dts: { entry: "src/index.ts" },
  clean: true,
  sourcemap: true,
  // @writ/conformance stays a package of its own: it finds its case files next to its own dist/.
  external: ["@writ/runtime", "@writ/conformance"],
  // `writ playground` serves the playground's static build from dist/playground, so it ships in this package.
  // The root `npm run build` builds @writ/playground before this package.
  onSuccess: async () => {
    if (!existsSync(`${playground}index.html`)) throw new Error("playground/dist is missing: build @writ/playground first (the root `npm run build` does)");
    await cp(playground, fileURLToPath(new URL("./dist/playground/", import.meta.url)), { recursive: true });
  },
});
