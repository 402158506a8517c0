import { h } from "../dom.js";

/**
 * The little markdown the compiler's hover text uses: fenced code blocks, `inline code` and paragraphs. Everything is
 * set as text, so nothing in a policy (a signal's doc comment) can inject markup.
 */
export function markdownElement(markdown: string, className: string): HTMLElement {
  const root = h("div", { class: className });
  const parts = markdown.split(/^```[a-z]*\n([\s\S]*?)\n```$/m);
  parts.forEach((part, i) => {
    if (i % 2 === 1) root.append(h("pre", null, part));
    else
      for (const paragraph of part.split(/\n{2,}/).filter((p) => p.trim() !== "")) root.append(h("p", null, ...inline(paragraph.trim())));
  });
  return root;
}

function inline(text: string): (Node | string)[] {
  return text.split(/`([^`]*)`/).map((piece, i) => (i % 2 === 1 ? h("code", null, piece) : piece));
}
