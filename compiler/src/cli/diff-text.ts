import type { Scalar } from "@writ/runtime";
import type { Outcome, PolicyDiff, Region, Witness } from "../diff/diff.js";
import type { Example, SignalChange } from "../diff/space.js";
import { plural } from "./report.js";

/** `writ diff`'s report for people: the contract, the signals, then each region grouped by verdicts, then what is undecided. */
export function diffLines(diff: PolicyDiff): string[] {
  const lines: string[] = [];
  if (diff.governs) {
    const binding = (b: readonly string[]) => (b.length > 0 ? b.join(", ") : "(none)");
    lines.push("", "governs:");
    if (diff.governs.old.action !== diff.governs.new.action)
      lines.push(`  action: \`${diff.governs.old.action}\` -> \`${diff.governs.new.action}\``);
    lines.push(`  binding: ${binding(diff.governs.old.binding)} -> ${binding(diff.governs.new.binding)}`);
  }
  if (diff.signals.length > 0) {
    lines.push("", `signals: ${plural(diff.signals.length, "change")}`);
    for (const c of diff.signals) lines.push(...signalLines(c));
  }
  lines.push(
    "",
    diff.regions.length === 0
      ? "decisions: no request is decided differently"
      : `decisions: ${plural(diff.regions.length, "region")} decided differently`,
  );
  const groups = new Map<string, Region[]>();
  for (const r of diff.regions) {
    const key = `${r.old.verdict} -> ${r.new.verdict}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [key, regions] of groups) {
    lines.push(`  ${key} (${plural(regions.length, "region")})`);
    for (const r of regions) {
      lines.push(`    old ${outcome(r.old)}`, `    new ${outcome(r.new)}`, ...witnessLines(r.witness));
    }
  }
  if (diff.undecided.length > 0) {
    lines.push("", `could not decide: ${plural(diff.undecided.length, "region")}`);
    for (const u of diff.undecided) {
      lines.push(`    old ${outcome(u.old)}`, `    new ${outcome(u.new)}`, ...u.reasons.map((r) => `      because of ${r}`));
    }
  }
  lines.push("", verdictLine(diff));
  return lines;
}

function verdictLine(diff: PolicyDiff): string {
  switch (diff.result) {
    case "equivalent":
      return "equivalent: same signals, and every request is decided alike";
    case "different":
      return diff.undecided.length > 0 ? "different (and some regions undecided)" : "different";
    case "undecided":
      return "undecided: no difference found, but some regions could not be decided";
  }
}

function outcome(o: Outcome): string {
  if (o.verdict === "undecided") return `\`${o.rule}\`: undecided (no rule fires and there is no \`otherwise\`)`;
  if (o.verdict === "fault") return `\`${o.rule}\`: fault (its condition faults, so the evaluation ends with no verdict)`;
  return `\`${o.rule}\`: ${o.verdict} ${JSON.stringify(o.reason)}`;
}

function witnessLines(w: Witness): string[] {
  const at = w.now === undefined ? [] : [`      at now = ${JSON.stringify(w.now)}`];
  if (w.validForBoth) return [`      witness: ${JSON.stringify(w.signals)}`, ...at];
  return [
    `      witness, as sent to the old version: ${JSON.stringify(w.oldSignals)}`,
    `               and to the new version: ${JSON.stringify(w.signals)}`,
    ...at,
  ];
}

function signalLines(c: SignalChange): string[] {
  switch (c.change) {
    case "added":
      return [`  + ${c.new}   (added)`];
    case "removed":
      return [`  - ${c.old}   (removed)`];
    case "changed": {
      const lines = [`  ~ ${c.old}  ->  ${c.new}`];
      if (c.oldOnly) lines.push(`      accepted by the old version only: ${example(c.oldOnly)}`);
      if (c.newOnly) lines.push(`      accepted by the new version only: ${example(c.newOnly)}`);
      if (c.disjoint) lines.push("      no value is accepted by both: witnesses send it to each version differently");
      if (c.undecided) lines.push(`      not compared: ${c.undecided}`);
      return lines;
    }
  }
}

function example(e: Example): string {
  return "absent" in e ? "absent" : scalar(e.value);
}

function scalar(v: Scalar): string {
  return JSON.stringify(v);
}
