/** The shell blocks of README.md and docs/*.md: every fenced block whose info string names a shell. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { BlockRef, ShellBlock } from "./types.js";

export const REPO = new URL("../../", import.meta.url).pathname;

/** `sh`, and the other names a shell block may be given, so that none escapes the test by its spelling. */
const SHELL_FENCE = /^ {0,3}(`{3,}|~{3,})\s*(sh|bash|shell|console|zsh)\b/;
const ANY_FENCE = /^ {0,3}(`{3,}|~{3,})/;

export function docFiles(root: string = REPO): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort();
  return ["README.md", ...docs.map((name) => `docs/${name}`)];
}

/** The shell blocks of one Markdown text. */
export function shellBlocksOf(file: string, markdown: string): ShellBlock[] {
  const lines = markdown.split("\n");
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = ANY_FENCE.exec(lines[i]!);
    if (open === null) continue;
    const fence = open[1]!;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence)) end++;
    if (SHELL_FENCE.test(lines[i]!)) blocks.push({ file, line: i + 1, text: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return blocks;
}

export function shellBlocks(root: string = REPO): ShellBlock[] {
  return docFiles(root).flatMap((file) => shellBlocksOf(file, readFileSync(join(root, file), "utf8")));
}

/** `file:line` of a block, for messages. */
export function where(block: ShellBlock): string {
  return `${block.file}:${block.line}`;
}

/** What a block opens with: its first line without a trailing comment (the comment, when the line is one). */
export function opening(block: ShellBlock): string {
  const first = block.text.split("\n")[0]!.trim();
  return first.replace(/\s+#.*$/, "") || first;
}

/** Whether `ref` names `block`. */
export function names(ref: BlockRef, block: ShellBlock): boolean {
  return block.file === ref.file && opening(block) === ref.opens;
}

/** The one block `ref` names. @throws Error naming the file when none or several do */
export function findBlock(ref: BlockRef, blocks: readonly ShellBlock[] = shellBlocks()): ShellBlock {
  const found = blocks.filter((block) => names(ref, block));
  if (found.length !== 1) {
    throw new Error(
      `${ref.file}: ${found.length} shell blocks open with \`${ref.opens}\` (${found.map(where).join(", ") || "none"}); the test names exactly one`,
    );
  }
  return found[0]!;
}
