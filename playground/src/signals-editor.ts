import { autocompletion, type CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import { json } from "@codemirror/lang-json";
import { defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { editorBase } from "./editor-base.js";
import type { PolicySession } from "./session.js";

/** Inside a member name (`"amo|`): the policy's signal names, with their declarations. */
function signalNames(session: PolicySession) {
  return (context: CompletionContext): CompletionResult | null => {
    const key = context.matchBefore(/"[A-Za-z0-9_]*/);
    if (!key) return null;
    const signals = session.names()?.signals ?? [];
    return {
      from: key.from + 1,
      options: signals.map((s) => ({ label: s.label, type: "variable", detail: s.detail })),
      validFor: /^[A-Za-z0-9_]*$/,
    };
  };
}

/** The signals editor: JSON, with the policy's signal names offered as member names. */
export function createSignalsEditor(parent: HTMLElement, session: PolicySession, text: string, onChange: () => void): EditorView {
  return new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        editorBase("signals (JSON)", onChange),
        json(),
        syntaxHighlighting(defaultHighlightStyle),
        autocompletion({ override: [signalNames(session)] }),
      ],
    }),
  });
}
