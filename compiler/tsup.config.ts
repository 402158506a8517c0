import { existsSync } from "node:fs";
import { cp, readFile, rm, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { defineConfig, type Options } from "tsup";

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const playground = here("../playground/dist/");
const conformance = here("../conformance/");
/**
 * The conformance suite behind `writ conformance`, inside this package as the package it is (its dist/, cases/,
 * fixtures/ and package.json): it finds its cases and its version relative to its own module, so it cannot be
 * bundled into the compiler's chunks. Its dependencies are this package's.
 */
const suite = here("./dist/conformance/");

/** `writ conformance` imports the suite from there: every chunk of the compiler is in dist/. */
const suiteInside: NonNullable<Options["esbuildPlugins"]>[number] = {
  name: "writ-conformance-inside",
  setup(build) {
    build.onResolve({ filter: /^@writ\/conformance$/ }, () => ({ path: "./conformance/dist/index.js", external: true }));
  },
};

export default defineConfig([
  {
    entry: ["src/index.ts", "src/cli.ts"],
    format: ["esm"],
    target: "node20",
    // The compiler installs alone: @writ/runtime is bundled from its sources (the root tsconfig.json maps @writ/* to
    // them), its dependencies are this package's, and so are its types, which need the root's baseUrl: tsup's
    // declaration build would resolve the paths from this folder and leave them imports.
    // chevrotain too, with the lodash-es it imports whole: loaded as ~700 modules, they were half of what `writ check`,
    // `compile`, `fmt` and `test` spent before doing anything (docs/benchmarks.md, "The first minute").
    noExternal: ["@writ/runtime", "chevrotain", /^@chevrotain\//, "lodash-es"],
    esbuildPlugins: [suiteInside],
    dts: { entry: "src/index.ts", compilerOptions: { baseUrl: ".." } },
    // dist/conformance is the other build's, which runs at the same time.
    clean: ["!conformance/**"],
    sourcemap: true,
    // `writ playground` serves the playground's static build from dist/playground, so it ships in this package.
    // The root `npm run build` builds @writ/playground before this package.
    onSuccess: async () => {
      if (!existsSync(`${playground}index.html`))
        throw new Error("playground/dist is missing: build @writ/playground first (the root `npm run build` does)");
      await cp(playground, here("./dist/playground/"), { recursive: true });
    },
  },
  {
    entry: { index: "../conformance/src/index.ts" },
    outDir: "dist/conformance/dist",
    format: ["esm"],
    target: "node20",
    clean: true,
    sourcemap: true,
    onSuccess: async () => {
      for (const dir of ["cases", "fixtures"]) {
        await rm(`${suite}${dir}`, { recursive: true, force: true });
        await cp(`${conformance}${dir}`, `${suite}${dir}`, { recursive: true });
      }
      const { name, version } = JSON.parse(await readFile(`${conformance}package.json`, "utf8")) as { name: string; version: string };
      await writeFile(`${suite}package.json`, `${JSON.stringify({ name, version, type: "module" }, null, 2)}\n`);
    },
  },
]);
