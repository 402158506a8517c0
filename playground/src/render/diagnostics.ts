import { setDiagnostics, type Diagnostic as LintDiagnostic } from "@codemirror/lint";
import type { EditorView } from "@codemirror/view";
import { h } from "../dom.js";

/** One problem in an editor's text, as the list under the editor and the editor's own marks show it. */
export interface Problem {
  readonly severity: "error" | "warning";
  /** A diagnostic code (`E301`, `W602`, `VAL-004`), or null for JSON that does not parse. */
  readonly code: string | null;
  readonly message: string;
  readonly notes: readonly string[];
  /** Offsets in the editor's text, `to` exclusive. */
  readonly from: number;
  readonly to: number;
}

/** Marks the problems in the editor and lists them in `list` (each item moves the cursor to its place). */
export function showProblems(view: EditorView, list: HTMLElement, problems: readonly Problem[], none: string): void {
  const length = view.state.doc.length;
  const marks = problems.map((p): LintDiagnostic => {
    const from = Math.min(p.from, length);
    return {
      from,
      to: Math.min(Math.max(p.to, from), length),
      severity: p.severity,
      message: [p.code ? `${p.code} ${p.message}` : p.message, ...p.notes].join("\n"),
    };
  });
  view.dispatch(setDiagnostics(view.state, marks));
  list.replaceChildren(...(problems.length === 0 ? [h("li", { class: "none" }, none)] : problems.map((p) => item(view, p))));
}

function item(view: EditorView, p: Problem): HTMLElement {
  const line = view.state.doc.lineAt(Math.min(p.from, view.state.doc.length));
  const where = `${line.number}:${Math.min(p.from, view.state.doc.length) - line.from + 1}`;
  const button = h(
    "button",
    { type: "button", class: `problem ${p.severity}`, title: "show in the editor" },
    h("span", { class: "where" }, where),
    p.code ? h("span", { class: "code" }, p.code) : null,
    h("span", { class: "message" }, p.message),
    ...p.notes.map((n) => h("span", { class: "note" }, n)),
  );
  button.addEventListener("click", () => {
    view.dispatch({ selection: { anchor: Math.min(p.from, view.state.doc.length) }, scrollIntoView: true });
    view.focus();
  });
  return h("li", null, button);
}
