import { defineConfig } from "tsup";

// The extension and its language server, each bundled into one CommonJS file with every dependency
// (vscode-languageclient, @writ/language-server, @writ/compiler and theirs), so the .vsix is self-contained.
export default defineConfig({
  entry: { extension: "src/extension.ts", server: "src/server.ts" },
  format: ["cjs"],
  outExtension: () => ({ js: ".cjs" }),
  target: "node20",
  platform: "node",
  clean: true,
  minify: true,
  sourcemap: false,
  noExternal: [/.*/],
  // Except `vscode`, which the editor provides.
  esbuildOptions: (options) => {
    options.external = ["vscode"];
  },
});
