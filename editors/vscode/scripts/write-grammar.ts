import { mkdirSync, writeFileSync } from "node:fs";
import { writGrammar } from "../src/grammar.js";

// Run by `npm run build` in this folder, after the compiler is built: the grammar the extension contributes.
const out = new URL("../dist/", import.meta.url);
mkdirSync(out, { recursive: true });
writeFileSync(new URL("writ.tmLanguage.json", out), `${JSON.stringify(writGrammar(), null, 2)}\n`);
