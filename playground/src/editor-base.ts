import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { lintGutter } from "@codemirror/lint";
import type { Extension } from "@codemirror/state";
import { EditorView, drawSelection, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";

/** What both editors have: line numbers, undo, the lint gutter, the default keys, and a call on every change. */
export function editorBase(label: string, onChange: () => void): Extension[] {
  return [
    lineNumbers(),
    history(),
    drawSelection(),
    highlightActiveLine(),
    EditorView.lineWrapping,
    lintGutter(),
    keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
    EditorView.contentAttributes.of({ "aria-label": label, spellcheck: "false" }),
    EditorView.updateListener.of((u) => {
      if (u.docChanged) onChange();
    }),
  ];
}

/** Replaces the editor's whole text (an example or a test case chosen, the policy formatted). */
export function replaceText(view: EditorView, text: string): void {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
}
