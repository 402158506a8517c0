/**
 * The bash script a block runs as: its substitutions made, its services sent to the background and waited for, and a
 * first line of harness (an ERR trap naming the doc line that failed, the wait for a service) that keeps the block's
 * lines where they are, so that `$LINENO` maps back to the doc.
 */
import { where } from "./markdown.js";
import type { Service, ShellBlock, Substitution } from "./types.js";

/** How long a service may take to answer; the test's own timeout is longer. */
const SERVICE_READY_S = 150;

/** @throws Error naming the block when a substitution's text is no longer in it */
export function substitute(block: ShellBlock, substitutions: readonly Substitution[]): string {
  let text = block.text;
  for (const { from, to, why } of substitutions) {
    if (!text.includes(from)) {
      throw new Error(
        `${where(block)}: the test replaces \`${from}\` (${why}), which is no longer in the block: the docs changed, update its table in test/docs-snippets/scenarios`,
      );
    }
    text = text.split(from).join(to);
  }
  return text;
}

const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * `command`, at the end of its line (before a comment), runs in the background, and the script waits until
 * `ready` answers. @throws Error naming the block unless exactly one line ends with `command`
 */
export function background(block: ShellBlock, text: string, { command, ready }: Service): string {
  const lines = text.split("\n");
  const ends = (line: string): boolean => {
    const at = line.lastIndexOf(command);
    return at >= 0 && /^\s*(#.*)?$/.test(line.slice(at + command.length));
  };
  const found = lines.flatMap((line, i) => (ends(line) ? [i] : []));
  if (found.length !== 1)
    throw new Error(
      `${where(block)}: ${found.length} lines end with \`${command}\`, which the test runs in the background; it needs exactly one`,
    );
  const i = found[0]!;
  const at = lines[i]!.lastIndexOf(command);
  const wait = `__writ_ready ${quote(ready)} $!`;
  lines[i] =
    `${lines[i]!.slice(0, at)}${command}${command.trimEnd().endsWith("&") ? " " : " & "}${wait}${lines[i]!.slice(at + command.length)}`;
  return lines.join("\n");
}

/** One line: the ERR trap, and `__writ_ready URL PID` (fails when PID exits first, or after SERVICE_READY_S). */
function prelude(block: ShellBlock): string {
  const trap = `trap ${quote(`__s=$?; echo "docs-snippets: ${block.file}:$((${block.line} + LINENO - 1)): exit status $__s" >&2`)} ERR`;
  const ready =
    `__writ_ready() { local deadline=$((SECONDS + ${SERVICE_READY_S})); ` +
    `until curl -fs -o /dev/null --max-time 10 "$1"; do ` +
    `if ! kill -0 "$2" 2>/dev/null; then echo "docs-snippets: the command that serves $1 exited before it answered" >&2; return 1; fi; ` +
    `if ((SECONDS > deadline)); then echo "docs-snippets: $1 did not answer within ${SERVICE_READY_S} s" >&2; return 1; fi; ` +
    `sleep 0.2; done; }`;
  return `${trap}; ${ready}`;
}

export function blockScript(block: ShellBlock, substitutions: readonly Substitution[], services: readonly Service[]): string {
  let text = substitute(block, substitutions);
  for (const service of services) text = background(block, text, service);
  return `${prelude(block)}\n${text}\n`;
}
