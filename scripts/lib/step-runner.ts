/**
 * Runs npm scripts as steps of one command (`npm test`, scripts/test.ts): each step starts once every step it runs
 * `after` has passed, or at once. A streaming step shares the terminal; a quiet one prints a line when it ends, and its
 * output at the end when it failed. Every started step runs to its end, so one run reports every failure.
 */
import { spawn, type ChildProcess } from "node:child_process";

export interface Step {
  /** What the lines printed call it. */
  readonly name: string;
  /** The npm script it runs. */
  readonly script: string;
  /** The names of earlier steps that must pass first. */
  readonly after?: readonly string[];
  /** Its output goes to the terminal as it comes (the tests'); otherwise it is kept, and printed only on failure. */
  readonly streams?: boolean;
}

export interface StepRunOptions {
  /** Where the package.json whose scripts the steps name is. */
  readonly cwd: string;
  /** A line of progress or of the summary. */
  readonly say: (line: string) => void;
  /** The kept output of a failed quiet step. */
  readonly write: (text: string) => void;
}

interface Outcome {
  readonly step: Step;
  readonly status: number;
  readonly output: string;
}

const since = (start: number): string => `${((performance.now() - start) / 1000).toFixed(1)} s`;

/** @throws Error when two steps share a name, or a step runs after one that is not before it */
function checkPlan(plan: readonly Step[]): void {
  const seen = new Set<string>();
  for (const step of plan) {
    for (const name of step.after ?? [])
      if (!seen.has(name)) throw new Error(`step ${step.name} runs after ${name}, which is not an earlier step`);
    if (seen.has(step.name)) throw new Error(`two steps are named ${step.name}`);
    seen.add(step.name);
  }
}

/** @returns 0 when every step passed, 1 otherwise. @throws Error for a plan `checkPlan` refuses, before running any step */
export async function runSteps(plan: readonly Step[], { cwd, say, write }: StepRunOptions): Promise<number> {
  checkPlan(plan);
  const started = performance.now();
  const children = new Set<ChildProcess>();
  const stop = (signal: NodeJS.Signals): void => {
    for (const child of children) child.kill(signal);
    process.exit(128 + (signal === "SIGINT" ? 2 : 15));
  };
  process.once("SIGINT", stop).once("SIGTERM", stop);

  const run = (step: Step): Promise<Outcome> => {
    const begun = performance.now();
    const child = spawn("npm", ["run", "--silent", step.script], {
      cwd,
      stdio: step.streams === true ? "inherit" : ["ignore", "pipe", "pipe"],
    });
    children.add(child);
    const chunks: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk));
    return new Promise((resolve) => {
      child.on("error", (error) => chunks.push(Buffer.from(`${error.message}\n`)));
      child.on("close", (code, signal) => {
        children.delete(child);
        const status = code ?? (signal === null ? 1 : 128);
        if (step.streams !== true)
          say(`${step.name} ${status === 0 ? "passed" : "FAILED (its output follows at the end)"} in ${since(begun)}`);
        resolve({ step, status, output: Buffer.concat(chunks).toString("utf8") });
      });
    });
  };

  const outcomes = new Map<string, Promise<Outcome | null>>();
  for (const step of plan) {
    const before = (step.after ?? []).map((name) => outcomes.get(name)!);
    const passed = Promise.all(before).then((all) => all.every((b) => b?.status === 0));
    outcomes.set(
      step.name,
      passed.then((go) => (go ? run(step) : null)),
    );
  }
  const results = await Promise.all(outcomes.values());
  process.off("SIGINT", stop).off("SIGTERM", stop);

  const failed = results.filter((r): r is Outcome => r !== null && r.status !== 0);
  for (const { step, output } of failed) if (step.streams !== true) write(`\n--- ${step.name} (npm run ${step.script}) failed:\n${output}`);
  const notRun = plan.filter((_, i) => results[i] === null).map((s) => s.name);
  if (failed.length === 0) {
    say(`every step passed in ${since(started)}`);
    return 0;
  }
  say(
    `failed in ${since(started)}: ${failed.map((f) => f.step.name).join(", ")}${notRun.length > 0 ? `; not run: ${notRun.join(", ")}` : ""}`,
  );
  return 1;
}
