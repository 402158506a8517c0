import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Readable } from "node:stream";
import {
  DECISION_INSTANT_FORM,
  decisionInstant,
  explain,
  parseDecisionInstant,
  parseStrictJson,
  readsNow,
  type Decision,
} from "@writ/runtime";
import { conditionsAsWritten, decisionLines, explanationLines } from "../explanation-text.js";
import { CliError, EXIT, type CliIo } from "../io.js";
import { readPolicyTarget, targetAbout, targetHeading } from "../policy-target.js";

export interface EvalRun {
  readonly io: CliIo;
  /** A policy source (`.writ` file or its directory), a bundle directory or a `.bundle.json` archive. */
  readonly policyPath: string;
  /** The signals object as JSON: a file, or `-` for standard input. */
  readonly signalsPath: string;
  readonly explain: boolean;
  readonly format: "text" | "json";
  /** The decision instant `now` reads (`--now`, RFC 3339); the current time when not given. */
  readonly now?: string;
  /** Standard input, for `-`. */
  readonly stdin?: Readable;
}

/**
 * `writ eval`: decides one request as a runtime would (the signals validated against the policy's schema, then the
 * rules evaluated) and prints the verdict, the rule and its reason, or the fault that decided nothing; with `explain`,
 * every rule's condition down to each comparison and the values it saw. Exit 0 when the signals are valid, whatever
 * the outcome; 1 when the schema refuses them (the VAL errors are printed); 3 when the policy does not compile; 5
 * when a bundle does not verify.
 */
export async function runEval(run: EvalRun): Promise<number> {
  const { io } = run;
  const given = run.now === undefined ? undefined : givenInstant(run.now);
  const signals = await readSignals(run);
  const target = await readPolicyTarget(io, run.policyPath);
  const about = targetAbout(target);
  const validation = target.validateSignals(signals);
  if (!validation.valid) {
    if (run.format === "json") io.out(JSON.stringify({ ...about, signalsValid: false, errors: validation.errors }));
    else {
      io.out(targetHeading(target));
      io.out("signals refused by the policy's signals schema:");
      for (const e of validation.errors) io.out(`  ${e.code} ${e.signal ? `\`${e.signal}\`: ` : ""}${e.message}`);
    }
    return EXIT.signalsRefused;
  }
  // The clock read once, as a runtime reads it for a decision; said whenever the policy reads it or it was given.
  const at = given ?? new Date();
  const now = given !== undefined || target.ir.rules.some((r) => readsNow(r.when)) ? decisionInstant(at) : null;
  const { decision, explanation } = explain(target.ir, signals as Record<string, unknown>, at);
  if (run.format === "json") {
    const fault = !decision.decided && decision.fault ? { fault: decision.fault } : {};
    const instant = now === null ? {} : { now };
    io.out(
      JSON.stringify({
        ...about,
        signalsValid: true,
        ...instant,
        decision: wireDecision(decision),
        ...fault,
        ...(run.explain ? { explanation } : {}),
      }),
    );
    return EXIT.ok;
  }
  io.out(targetHeading(target));
  if (now !== null) io.out(`now:     ${now}${given === undefined ? " (the current time; --now sets it)" : ""}`);
  for (const line of decisionLines(decision)) io.out(line);
  if (run.explain) for (const line of explanationLines(explanation, decision, await conditionsAsWritten(target.source))) io.out(line);
  return EXIT.ok;
}

/** `--now`'s instant; a refused one is a usage error that says the form. */
function givenInstant(text: string): Date {
  const at = parseDecisionInstant(text);
  if (at === null) throw new CliError(`eval: --now must be ${DECISION_INSTANT_FORM}; given \`${text}\``);
  return at;
}

/** The decision as the sidecar's answers name it (`ruleMatched`); null when undecided or faulted. */
function wireDecision(d: Decision): { verdict: string; ruleMatched: string; reason: string } | null {
  return d.decided ? { verdict: d.verdict, ruleMatched: d.ruleId, reason: d.reason } : null;
}

async function readSignals(run: EvalRun): Promise<unknown> {
  let text: string;
  if (run.signalsPath === "-") {
    const chunks: Buffer[] = [];
    for await (const chunk of run.stdin ?? process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
    text = Buffer.concat(chunks).toString("utf8");
  } else {
    try {
      text = await readFile(resolve(run.io.cwd, run.signalsPath), "utf8");
    } catch {
      throw new CliError(`cannot read the signals file \`${run.signalsPath}\``);
    }
  }
  const where = run.signalsPath === "-" ? "standard input" : `\`${run.signalsPath}\``;
  try {
    return parseStrictJson(text);
  } catch (e) {
    throw new CliError(`the signals in ${where} are not strict JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
}
