import { h } from "../dom.js";
import { signalsText } from "../examples.js";
import type { DiffRegion, DiffSide, PolicyDiff } from "./plug.js";

export interface DiffPanel {
  /** Compares `policy` with the baseline and shows the result. */
  update(policy: string): void;
  /** The policy compared against from now on. */
  setBaseline(policy: string): void;
}

/**
 * The diff panel (shown only once `policyDiff` is plugged in, diff/plug.ts): the baseline, then "equivalent" or each
 * region with its witness signals (and instant), which `trySignals` loads into the signals editor (and the `now` field).
 */
export function mountDiffPanel(
  root: HTMLElement,
  diff: PolicyDiff,
  baseline: string,
  current: () => string,
  trySignals: (text: string, now: string) => void,
): DiffPanel {
  let base = baseline;
  const result = h("div", { class: "diff-result" });
  const rebase = h("button", { type: "button" }, "use the current policy as the baseline");
  root.replaceChildren(
    h("h2", null, "Changes against the baseline"),
    h(
      "p",
      { class: "lead" },
      "Every region of the signal space where the verdict or the deciding rule differs from the baseline's, with signals to try. ",
      rebase,
    ),
    result,
  );
  root.hidden = false;
  const panel: DiffPanel = {
    update(policy) {
      const r = diff(base, policy);
      if (r.kind === "failed") return result.replaceChildren(h("p", { class: "why" }, r.message));
      const undecided =
        r.undecided.length === 0
          ? []
          : [h("p", { class: "why" }, "Could not decide:"), h("ul", { class: "undecided" }, ...r.undecided.map((u) => h("li", null, u)))];
      if (r.regions.length === 0 && r.undecided.length === 0)
        result.replaceChildren(h("p", { class: "equivalent" }, "Equivalent: both versions decide alike for every signal set."));
      else
        result.replaceChildren(h("ol", { class: "regions" }, ...r.regions.map((region) => regionItem(region, trySignals))), ...undecided);
    },
    setBaseline(policy) {
      base = policy;
      panel.update(policy);
    },
  };
  rebase.addEventListener("click", () => panel.setBaseline(current()));
  return panel;
}

function regionItem(region: DiffRegion, trySignals: (text: string, now: string) => void): HTMLElement {
  const text = signalsText(region.witness);
  const button = h("button", { type: "button" }, "try these signals");
  button.addEventListener("click", () => trySignals(text, region.now));
  const at = region.now === "" ? [] : [h("p", { class: "witness-now" }, "at now = ", h("code", null, region.now))];
  return h(
    "li",
    null,
    h("p", null, side("baseline", region.before), " → ", side("now", region.after), " ", button),
    h("pre", null, text),
    ...at,
  );
}

function side(label: string, s: DiffSide): HTMLElement {
  return h(
    "span",
    { class: "side" },
    `${label}: `,
    h("span", { class: `verdict-${s.verdict}` }, s.verdict),
    s.rule === null ? "" : ` (${s.rule})`,
  );
}
