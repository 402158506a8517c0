import type { SignalsOutcome } from "@writ/compiler";
import { h } from "../dom.js";

/**
 * The answer, as a runtime would give it for these signals: the verdict, the rule that decided and its reason, and the
 * instant `now` read when the policy reads it; or why there is none (the policy has errors, the `now` given is no
 * instant, the signals are not JSON, the schema refuses them, or a rule's condition faulted). `data-verdict` on `root`
 * names the state for styling.
 */
export function renderDecision(root: HTMLElement, policyErrors: number, outcome: SignalsOutcome | null, nowRefusal: string | null): void {
  const [state, ...content] =
    nowRefusal === null
      ? decision(policyErrors, outcome)
      : ["none", h("p", { class: "verdict" }, "no decision"), h("p", { class: "why" }, nowRefusal)];
  if (outcome?.kind === "decided" && outcome.now !== null && nowRefusal === null)
    content.push(h("p", { class: "now" }, "decided at now = ", h("code", null, outcome.now)));
  root.dataset["verdict"] = state;
  root.replaceChildren(...content);
}

function decision(policyErrors: number, outcome: SignalsOutcome | null): [string, ...HTMLElement[]] {
  if (outcome === null) {
    const errors = policyErrors === 1 ? "an error: fix it" : `${policyErrors} errors: fix them`;
    return [
      "none",
      h("p", { class: "verdict" }, "no decision"),
      h("p", { class: "why" }, `The policy has ${errors} to see what it decides.`),
    ];
  }
  switch (outcome.kind) {
    case "not-json":
      return [
        "none",
        h("p", { class: "verdict" }, "no decision"),
        h("p", { class: "why" }, `The signals are not strict JSON: ${outcome.message}.`),
      ];
    case "refused": {
      const n = outcome.errors.length;
      return [
        "refused",
        h("p", { class: "verdict" }, "refused"),
        h(
          "p",
          { class: "why" },
          `The policy's signals schema refuses these signals (${n} problem${n === 1 ? "" : "s"}, listed under them): a sidecar answers 422 with each VAL code.`,
        ),
      ];
    }
    case "decided": {
      const d = outcome.decision;
      if (!d.decided && d.fault) {
        const { code, ruleId, message } = d.fault;
        return [
          "fault",
          h("p", { class: "verdict" }, "fault"),
          h("p", { class: "decided-by" }, "rule ", h("code", null, ruleId), " ", h("code", null, code)),
          h("p", { class: "why" }, `${message}: nothing is decided, and a sidecar answers 422 [${code}@${ruleId}] and consumes nothing.`),
        ];
      }
      if (!d.decided) {
        return [
          "undecided",
          h("p", { class: "verdict" }, "undecided"),
          h("p", { class: "why" }, "No rule's condition is true and the policy has no `otherwise`: a sidecar answers SYS-006."),
        ];
      }
      return [
        d.verdict,
        h("p", { class: "verdict" }, d.verdict),
        h("p", { class: "decided-by" }, "rule ", h("code", null, d.ruleId)),
        h("p", { class: "reason" }, d.reason),
      ];
    }
  }
}
