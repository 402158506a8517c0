import { autocompletion, type Completion as CmCompletion, type CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import { EditorState, type Range } from "@codemirror/state";
import { Decoration, EditorView, ViewPlugin, hoverTooltip, type DecorationSet, type Tooltip, type ViewUpdate } from "@codemirror/view";
import { completionsAt, highlightSpans, hoverAt, type Completion } from "@writ/compiler";
import { editorBase } from "./editor-base.js";
import { markdownElement } from "./render/markdown.js";
import type { PolicySession } from "./session.js";

/** Colours from the compiler's lexer and lexicon (`highlightSpans`): one class per role, `tok-keyword-verdict` and so on. */
const highlighting = ViewPlugin.fromClass(
  class {
    decorations: DecorationSet;
    constructor(view: EditorView) {
      this.decorations = decorate(view.state.doc.toString());
    }
    update(update: ViewUpdate): void {
      if (update.docChanged) this.decorations = decorate(update.state.doc.toString());
    }
  },
  { decorations: (plugin) => plugin.decorations },
);

function decorate(text: string): DecorationSet {
  const marks: Range<Decoration>[] = highlightSpans(text)
    .filter((s) => s.to > s.from)
    .map((s) => Decoration.mark({ class: `tok-${s.kind}` }).range(s.from, s.to));
  return Decoration.set(marks, true);
}

const COMPLETION_TYPE: Readonly<Record<Completion["kind"], string>> = {
  signal: "variable",
  constant: "constant",
  function: "function",
  keyword: "keyword",
  zone: "text",
};

/**
 * Completion from the compiler's grammar (`completionsAt`): keywords, and the signals and constants that fit there; a
 * zone name inside a calendar field's zone argument, which replaces the whole name typed (`Europe/Lo`).
 */
function completionSource(session: PolicySession) {
  return (context: CompletionContext): CompletionResult | null => {
    const zone = context.matchBefore(/"[A-Za-z0-9_/+-]*/);
    const word = context.matchBefore(/[A-Za-z_][A-Za-z0-9_]*/);
    if (!word && !zone && !context.explicit) return null;
    const check = session.check(context.state.doc.toString());
    const found = completionsAt(check, context.pos, session.names());
    const options = found.map((c): CmCompletion => ({
      label: c.label,
      type: COMPLETION_TYPE[c.kind],
      detail: c.detail,
      ...(c.doc ? { info: c.doc } : {}),
    }));
    if (options.length === 0) return null;
    const replaces = found[0]?.replaces;
    if (zone && replaces) return { from: replaces.start, options, validFor: /^[A-Za-z0-9_/+-]*$/ };
    return { from: word?.from ?? context.pos, options, validFor: /^[A-Za-z0-9_]*$/ };
  };
}

/** Hover from the compiler (`hoverAt`): a signal's or constant's declaration, a keyword's or operator's doc. */
function hover(session: PolicySession) {
  return hoverTooltip((view, pos): Tooltip | null => {
    const info = hoverAt(session.check(view.state.doc.toString()), pos);
    if (!info) return null;
    return { pos: info.range.start, end: info.range.end, above: true, create: () => ({ dom: markdownElement(info.markdown, "hover") }) };
  });
}

/** The policy editor: the writ language's highlighting, completion and hover, and the lint gutter for diagnostics. */
export function createPolicyEditor(parent: HTMLElement, session: PolicySession, text: string, onChange: () => void): EditorView {
  return new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        editorBase("policy source", onChange),
        highlighting,
        autocompletion({ override: [completionSource(session)] }),
        hover(session),
      ],
    }),
  });
}
