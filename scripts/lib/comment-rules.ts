/**
 * The comment rules of `npm run lint` (scripts/check-comments.ts; README.md, "Comments state reasons"): comments state
 * reasons, so a file's header is at most 12 lines and no comment quotes a figure (a percentage, a time below a
 * millisecond, a count of instructions, a library's version); figures go in docs/benchmarks.md, essays in the docs.
 */
import ts from "typescript";

export const HEADER_LINE_CAP = 12;

export type CommentRule = "header-length" | "percentage" | "sub-millisecond" | "instructions" | "library-version";

export interface CommentFinding {
  readonly line: number;
  readonly rule: CommentRule;
  readonly message: string;
}

const MOVE_FIGURE = 'move the figure to docs/benchmarks.md and point to its section (// Cost: docs/benchmarks.md, "Section")';

interface FigureRule {
  readonly rule: CommentRule;
  readonly pattern: RegExp;
  readonly what: string;
}

/**
 * Each figure rule: what it refuses, written so that settings (whole milliseconds and seconds, `30d`, sizes) and
 * operators (`a % b`) pass; examples of each side: test/scripts/comment-rules.test.ts.
 */
const FIGURES: readonly FigureRule[] = [
  // A number glued to a percent sign, or followed by "per cent"; a remainder `a % b` has spaces.
  { rule: "percentage", pattern: /\d%|\d\s*per\s?cent\b/i, what: "a percentage" },
  // A time no setting is written in: micro- or nanoseconds, or a fraction of a millisecond; whole ms and s are settings.
  {
    rule: "sub-millisecond",
    pattern: /\d\s*(?:µs|μs|us|ns)\b|\d\s+(?:micro|nano)seconds?\b|\d\.\d+\s*ms\b/,
    what: "a measured time",
  },
  // A number (with a K, M or G) followed by "instructions" or callgrind's "Ir".
  { rule: "instructions", pattern: /\d[\d,.]*\s*[KkMG]?\s+(?:instructions|Ir)\b/, what: "a count of instructions" },
];

/** The platforms a measurement names besides the packages (Node, PostgreSQL, valgrind, V8), as they are written. */
const PLATFORMS = ["node", "Node", "Node.js", "PostgreSQL", "valgrind", "V8"];

/**
 * A library's version: a package the repository depends on (or a platform), as written (case and all) or with `-js`,
 * then `@` or a space and a version of two or three parts. Sections of an RFC, the SemVer spec's version and policy
 * versions (`payments.transfer@1.2.0`) name no package, so they pass (examples: test/scripts/comment-rules.test.ts).
 */
function libraryVersionRule(libraries: readonly string[]): FigureRule {
  const names = [...libraries, ...PLATFORMS]
    .map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"))
    .sort((a, b) => b.length - a.length);
  const pattern = new RegExp(`(?<![\\w.@/-])(?:${names.join("|")})(?:-js)?(?:\\s+|@)v?\\d+\\.\\d+(?:\\.\\d+)?(?!\\w|\\.\\d)`);
  return { rule: "library-version", pattern, what: "a library's version" };
}

interface Comment {
  readonly pos: number;
  readonly end: number;
  readonly text: string;
}

/** Every comment of `text`, in order: the comments before each token (and before the end of the file). */
function commentsOf(source: ts.SourceFile): Comment[] {
  const found = new Map<number, Comment>();
  const visit = (node: ts.Node): void => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    if (node.kind <= ts.SyntaxKind.LastToken || node.kind === ts.SyntaxKind.EndOfFileToken) {
      for (const range of ts.getLeadingCommentRanges(source.text, node.pos) ?? []) {
        found.set(range.pos, { pos: range.pos, end: range.end, text: source.text.slice(range.pos, range.end) });
      }
      return;
    }
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found.values()].sort((a, b) => a.pos - b.pos);
}

const isImportOrReexport = (statement: ts.Statement): boolean =>
  ts.isImportDeclaration(statement) ||
  ts.isImportEqualsDeclaration(statement) ||
  (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined);

/**
 * The findings of the comment rules in one file. The header is every comment before the first statement that is not
 * an import or a re-export (so a module doc written after the imports counts); each of its blocks (a `/* *\/` comment,
 * or a run of `//` lines) is at most HEADER_LINE_CAP lines. The figure rules read every comment; `libraries` are the
 * package names whose versions are figures (the dependencies of every package.json).
 */
export function checkComments(fileName: string, text: string, libraries: readonly string[]): CommentFinding[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number): number => source.getLineAndCharacterOfPosition(pos).line + 1;
  const comments = commentsOf(source);
  const findings: CommentFinding[] = [];

  const body = source.statements.find((statement) => !isImportOrReexport(statement));
  const headerEnd = body ? body.getStart(source) : text.length;
  // Each block as its first and last comment.
  const blocks: { first: Comment; last: Comment }[] = [];
  for (const comment of comments.filter((c) => c.pos < headerEnd)) {
    const open = blocks.at(-1);
    const joins = open?.last.text.startsWith("//") && comment.text.startsWith("//") && lineOf(comment.pos) === lineOf(open.last.end) + 1;
    if (open && joins) open.last = comment;
    else blocks.push({ first: comment, last: comment });
  }
  for (const { first, last } of blocks) {
    const line = lineOf(first.pos);
    const lines = lineOf(last.end) - line + 1;
    if (lines > HEADER_LINE_CAP) {
      findings.push({
        line,
        rule: "header-length",
        message: `a header of ${lines} lines, over ${HEADER_LINE_CAP}: keep the reason, move the essay to the docs (docs/audit.md, docs/fleet.md, docs/storage-engines.md, docs/sidecar.md …) and point to its section`,
      });
    }
  }

  const figures = [...FIGURES, libraryVersionRule(libraries)];
  for (const comment of comments) {
    // A figure may run over a line break: each break and the next line's ` * ` or `//` read as spaces (same offsets).
    const prose = comment.text.replace(/\n[ \t]*(?:\*(?!\/)|\/\/)?/g, (gap) => " ".repeat(gap.length));
    for (const { rule, pattern, what } of figures) {
      const match = pattern.exec(prose);
      if (!match) continue;
      const line = lineOf(comment.pos + match.index);
      findings.push({ line, rule, message: `${what} (\`${match[0].replace(/\s+/g, " ").trim()}\`) in a comment: ${MOVE_FIGURE}` });
    }
  }
  return findings.sort((a, b) => a.line - b.line);
}
