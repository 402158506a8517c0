import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { defineConfig, type Options } from "tsup";

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

/** `import text from "./file?raw"`: the file's text, as Vite reads the same suffix (a JSON file is not parsed then). */
const raw: NonNullable<Options["esbuildPlugins"]>[number] = {
  name: "raw",
  setup(build) {
    build.onResolve({ filter: /\?raw$/ }, (args) => ({
      path: fileURLToPath(new URL(args.path.slice(0, -"?raw".length), `file://${args.resolveDir}/`)),
      namespace: "raw",
    }));
    build.onLoad({ filter: /.*/, namespace: "raw" }, async (args) => ({ contents: await readFile(args.path, "utf8"), loader: "text" }));
  },
};

/**
 * The playground as static files in dist/: index.html and style.css (from public/) and one script with the compiler,
 * the runtime's evaluator and CodeMirror in it. `@writ/compiler` and `@writ/runtime` are bundled from their portable
 * entries (no Node built-in), as tsconfig.json here checks them; anything Node-only fails this build. The compiler's
 * build copies dist/ into the compiler package, which `writ playground` serves (docs/playground.md).
 */
export default defineConfig({
  entry: { playground: "src/main.ts" },
  format: ["esm"],
  platform: "browser",
  target: ["chrome111", "firefox113", "safari16.4"],
  outDir: "dist",
  clean: true,
  minify: true,
  sourcemap: false,
  splitting: false,
  dts: false,
  noExternal: [/.*/],
  publicDir: "public",
  loader: { ".writ": "text" },
  esbuildPlugins: [raw],
  esbuildOptions: (options) => {
    options.alias = { "@writ/compiler": here("../compiler/src/portable.ts"), "@writ/runtime": here("../runtime/src/portable.ts") };
    options.legalComments = "none";
  },
});
