/** The shell blocks of the docs that this test does not run, each with the reason. */
import type { Skip } from "./types.js";

const START = "covered by test/start.test.ts";
const PLAYGROUND =
  "each line is another way to start a server that runs until Ctrl-C, and --open starts a desktop browser: covered by playground/test/serve.test.ts (`writ playground --open` from the built compiler, $BROWSER standing in for the browser, SIGTERM) and compiler/test/cli-playground.test.ts (the server, the options)";

export const SKIPPED: readonly Skip[] = [
  {
    file: "README.md",
    opens: "npm install && npm start",
    reason: `${START} (\`npm start\`); \`npm install && npm test\` is what CI runs (.ci/run), this test included`,
  },
  { file: "docs/sidecar.md", opens: "npm install && npm start", reason: START },
  {
    file: "docs/editor.md",
    opens: "npm install",
    reason:
      "`code --install-extension` needs VS Code; the .vsix `npm run package:vscode` builds is checked by editors/vscode/test/vsix.e2e.test.ts",
  },
  { file: "README.md", opens: "npm run build && npx writ playground --open", reason: PLAYGROUND },
  { file: "docs/playground.md", opens: "npx writ playground", reason: PLAYGROUND },
];
