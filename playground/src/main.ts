import { formatSource } from "@writ/compiler";
import { DECISION_INSTANT_FORM, parseDecisionInstant } from "@writ/runtime";
import { mountDiffPanel } from "./diff/panel.js";
import { policyDiff } from "./diff/plug.js";
import { byId, h } from "./dom.js";
import { replaceText } from "./editor-base.js";
import { EXAMPLES, type Example } from "./examples.js";
import { createPolicyEditor } from "./policy-editor.js";
import { policyProblem, signalsProblems } from "./problems.js";
import { renderDecision } from "./render/decision.js";
import { showProblems } from "./render/diagnostics.js";
import { renderExplanation } from "./render/explanation.js";
import { POLICY_FILE, PolicySession } from "./session.js";
import { createSignalsEditor } from "./signals-editor.js";

/** How long typing must pause before the policy is checked and the signals decided again. */
const DEBOUNCE_MS = 200;

const session = new PolicySession();
const first = EXAMPLES[0]!;
let timer: ReturnType<typeof setTimeout> | undefined;

const policyView = createPolicyEditor(byId("policy-editor"), session, first.policy, schedule);
const signalsView = createSignalsEditor(byId("signals-editor"), session, first.cases[0]!.signals, schedule);
const diffPanel = policyDiff
  ? mountDiffPanel(
      byId("diff-panel"),
      policyDiff,
      first.policy,
      () => policyView.state.doc.toString(),
      (text, now) => {
        setNow(now);
        replaceText(signalsView, text);
      },
    )
  : null;

const exampleSelect = byId<HTMLSelectElement>("example");
const caseSelect = byId<HTMLSelectElement>("case");
const nowInput = byId<HTMLInputElement>("now");
nowInput.value = first.cases[0]!.now;
nowInput.addEventListener("input", schedule);
exampleSelect.replaceChildren(...EXAMPLES.map((e) => h("option", { value: e.id }, e.id)));
fillCases(first);
exampleSelect.addEventListener("change", () => {
  const example = EXAMPLES.find((e) => e.id === exampleSelect.value)!;
  fillCases(example);
  setNow(example.cases[0]!.now);
  replaceText(policyView, example.policy);
  replaceText(signalsView, example.cases[0]!.signals);
  diffPanel?.setBaseline(example.policy);
});
caseSelect.addEventListener("change", () => {
  const example = EXAMPLES.find((e) => e.id === exampleSelect.value)!;
  const chosen = example.cases[Number(caseSelect.value)];
  if (!chosen) return;
  setNow(chosen.now);
  replaceText(signalsView, chosen.signals);
});
byId("format").addEventListener("click", () => {
  const formatted = formatSource(POLICY_FILE, policyView.state.doc.toString());
  if (formatted.ok) replaceText(policyView, formatted.text);
  else byId("status").textContent = "not formatted: the policy has syntax errors";
});
update();

function fillCases(example: Example): void {
  caseSelect.replaceChildren(...example.cases.map((c, i) => h("option", { value: String(i) }, `${c.name} (${c.expected})`)));
}

/** Sets the `now` field (empty: the current time) without waiting for typing to pause. */
function setNow(text: string): void {
  nowInput.value = text;
  schedule();
}

/** The instant the `now` field gives: undefined for the current time, or why the text is none. */
function givenNow(): { readonly at?: Date; readonly refusal: string | null } {
  const text = nowInput.value.trim();
  if (text === "") return { refusal: null };
  const at = parseDecisionInstant(text);
  return at === null ? { refusal: `\`now\` must be ${DECISION_INSTANT_FORM}, or empty for the current time.` } : { at, refusal: null };
}

function schedule(): void {
  document.body.dataset["state"] = "pending";
  clearTimeout(timer);
  timer = setTimeout(update, DEBOUNCE_MS);
}

/** Checks the policy, decides the signals and shows everything; `data-state="ready"` on the body once shown. */
function update(): void {
  const started = performance.now();
  const policy = policyView.state.doc.toString();
  const signals = signalsView.state.doc.toString();
  const check = session.check(policy);
  const now = givenNow();
  nowInput.setAttribute("aria-invalid", String(now.refusal !== null));
  const outcome = session.decide(policy, signals, now.at);
  const errors = check.diagnostics.filter((d) => d.severity === "error").length;
  showProblems(policyView, byId("policy-problems"), check.diagnostics.map(policyProblem), "No problems.");
  showProblems(
    signalsView,
    byId("signals-problems"),
    signalsProblems(signals, outcome),
    outcome ? "Valid for the policy's signals schema." : "Checked once the policy compiles.",
  );
  renderDecision(byId("decision"), errors, outcome, errors === 0 ? now.refusal : null);
  renderExplanation(byId("explanation"), outcome?.kind === "decided" ? outcome.explanation : null);
  diffPanel?.update(policy);
  byId("status").textContent = `checked and decided in ${Math.max(1, Math.round(performance.now() - started))} ms`;
  document.body.dataset["state"] = "ready";
}
