import type { ExplanationView, ExprView, RuleView } from "@writ/compiler";
import { h } from "../dom.js";

/**
 * Why the policy decides as it does: every rule in order with its condition's result (true, false, unknown or fault),
 * the condition as written, and the condition as evaluated, as a tree down to each comparison and the values it saw.
 * The deciding rule's tree is open, or the one whose fault ended the evaluation; rules after it are shown dimmed (they
 * were evaluated but cannot decide).
 */
export function renderExplanation(root: HTMLElement, view: ExplanationView | null): void {
  if (view === null) {
    root.replaceChildren(h("p", { class: "empty" }, "The explanation appears with a decision."));
    return;
  }
  const decided = view.rules.findIndex((r) => r.decides || r.ends);
  const rules = view.rules.map((r, i) => rule(r, decided !== -1 && i > decided));
  for (const name of view.dropped) {
    rules.push(
      h(
        "li",
        { class: "rule dropped" },
        h(
          "div",
          { class: "head" },
          h("span", { class: "name" }, name),
          h("span", { class: "note" }, "not in the compiled policy: it can never decide"),
        ),
      ),
    );
  }
  const o = view.otherwise;
  rules.push(
    h(
      "li",
      { class: `rule otherwise${o?.decides ? " decides" : ""}${decided !== -1 ? " after" : ""}` },
      h(
        "div",
        { class: "head" },
        h("span", { class: "name" }, "otherwise"),
        o ? outcome(o.verdict, o.reason) : h("span", { class: "note" }, "none: the policy has no catch-all"),
        o?.decides ? h("span", { class: "decides-mark" }, "decides") : null,
      ),
    ),
  );
  root.replaceChildren(
    h("p", { class: "lead" }, "Rules in order; the first whose condition is true decides."),
    h("ol", { class: "rules" }, ...rules),
  );
}

function rule(r: RuleView, after: boolean): HTMLElement {
  const classes = ["rule", `truth-${r.result}`, r.decides ? "decides" : "", r.ends ? "ends" : "", after ? "after" : ""]
    .filter((c) => c !== "")
    .join(" ");
  const details = h("details", null, h("summary", null, "evaluated"), h("ul", { class: "tree" }, expr(r.condition)));
  details.open = r.decides || r.ends;
  return h(
    "li",
    { class: classes, "data-rule": r.rule },
    h(
      "div",
      { class: "head" },
      truth(r.result),
      h("span", { class: "name" }, r.rule),
      outcome(r.verdict, r.reason),
      r.decides ? h("span", { class: "decides-mark" }, "decides") : null,
      r.ends ? h("span", { class: "decides-mark" }, "ends the evaluation") : null,
    ),
    r.written === null ? null : h("code", { class: "written" }, `when ${r.written}`),
    details,
  );
}

function expr(e: ExprView): HTMLElement {
  return h(
    "li",
    null,
    h("span", { class: "expr" }, h("code", null, e.expr), h("span", { class: `value${e.truth ? ` truth-${e.truth}` : ""}` }, e.value)),
    e.operands.length > 0 ? h("ul", null, ...e.operands.map(expr)) : null,
  );
}

function truth(result: string): HTMLElement {
  return h("span", { class: `truth truth-${result}` }, result);
}

function outcome(verdict: string, reason: string): HTMLElement {
  return h("span", { class: "outcome" }, h("span", { class: `verdict-${verdict}` }, verdict), ` ${JSON.stringify(reason)}`);
}
