/**
 * `npm test`: the JavaScript build beside the type check and the lint (each mostly one core), then the unit tests, which
 * fill both cores by themselves (the checks beside them slowed them by more than the checks take), then the policies'
 * format (scripts/lib/step-runner.ts).
 */
import { fileURLToPath } from "node:url";
import { runSteps, type Step } from "./lib/step-runner.js";

const PLAN: readonly Step[] = [
  { name: "build", script: "build:js", streams: true },
  { name: "typecheck", script: "typecheck" },
  { name: "lint", script: "lint" },
  { name: "unit tests", script: "test:unit", after: ["build", "typecheck", "lint"], streams: true },
  // The compiler's CLI formats: it needs the build.
  { name: "policies' format", script: "fmt:policies", after: ["build"] },
];

process.exitCode = await runSteps(PLAN, {
  cwd: fileURLToPath(new URL("../", import.meta.url)),
  say: (line) => void process.stderr.write(`test: ${line}\n`),
  write: (text) => void process.stderr.write(text),
});
