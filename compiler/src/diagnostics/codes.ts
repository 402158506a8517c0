/**
 * Every diagnostic the compiler can report, as data. docs/language.md has one catalogue entry per code and
 * a test fails when the two disagree. Codes are stable: a code is never reused for another meaning.
 * E1xx lex, E2xx parse, E3xx build-ast, E4xx/W4xx resolve, E5xx type-check, W6xx analyze, E8xx emit.
 */
export type Severity = "error" | "warning";

export interface DiagnosticInfo {
  readonly severity: Severity;
  readonly phase: string;
  readonly title: string;
}

export const DIAGNOSTICS = {
  E101: { severity: "error", phase: "lex", title: "unexpected character" },
  E102: { severity: "error", phase: "lex", title: "unterminated string literal" },
  E103: { severity: "error", phase: "lex", title: "unterminated regular expression" },
  E201: { severity: "error", phase: "parse", title: "syntax error" },
  E202: { severity: "error", phase: "parse", title: "expression nested too deeply" },
  E203: { severity: "error", phase: "parse", title: "condition too long" },
  E301: { severity: "error", phase: "build-ast", title: "invalid string escape" },
  E302: { severity: "error", phase: "build-ast", title: "invalid number literal" },
  E303: { severity: "error", phase: "build-ast", title: "invalid regular expression" },
  E304: { severity: "error", phase: "build-ast", title: "invalid policy id" },
  E305: { severity: "error", phase: "build-ast", title: "invalid policy version" },
  E306: { severity: "error", phase: "build-ast", title: "invalid signal constraint" },
  E307: { severity: "error", phase: "build-ast", title: "invalid action name" },
  E308: { severity: "error", phase: "build-ast", title: "duplicate enum value" },
  E309: { severity: "error", phase: "build-ast", title: "empty reason" },
  E310: { severity: "error", phase: "build-ast", title: "regular expression not linear" },
  E401: { severity: "error", phase: "resolve", title: "duplicate signal" },
  E402: { severity: "error", phase: "resolve", title: "duplicate constant" },
  E403: { severity: "error", phase: "resolve", title: "duplicate rule name" },
  E404: { severity: "error", phase: "resolve", title: "unknown name" },
  E405: { severity: "error", phase: "resolve", title: "unknown binding signal" },
  E406: { severity: "error", phase: "resolve", title: "duplicate binding signal" },
  E407: { severity: "error", phase: "resolve", title: "unknown function" },
  W401: { severity: "warning", phase: "resolve", title: "unused signal" },
  W402: { severity: "warning", phase: "resolve", title: "unused constant" },
  E501: { severity: "error", phase: "type-check", title: "condition is not boolean" },
  E502: { severity: "error", phase: "type-check", title: "operand types do not match" },
  E503: { severity: "error", phase: "type-check", title: "operator not defined for type" },
  E504: { severity: "error", phase: "type-check", title: "value is not in the enum" },
  E505: { severity: "error", phase: "type-check", title: "invalid timestamp literal" },
  E506: { severity: "error", phase: "type-check", title: "wrong arguments to function" },
  E507: { severity: "error", phase: "type-check", title: "mixed list" },
  E508: { severity: "error", phase: "type-check", title: "constant used as a value it is not" },
  E509: { severity: "error", phase: "type-check", title: "division of a decimal" },
  E510: { severity: "error", phase: "type-check", title: "decimal mixed with number" },
  E511: { severity: "error", phase: "type-check", title: "invalid version literal" },
  E512: { severity: "error", phase: "type-check", title: "invalid IP address or CIDR literal" },
  E513: { severity: "error", phase: "type-check", title: "invalid time-zone name" },
  W601: { severity: "warning", phase: "analyze", title: "no catch-all" },
  W602: { severity: "warning", phase: "analyze", title: "unreachable rule" },
  W603: { severity: "warning", phase: "analyze", title: "shadowed rule" },
  W604: { severity: "warning", phase: "analyze", title: "condition is always true" },
  W605: { severity: "warning", phase: "analyze", title: "condition is never true" },
  W606: { severity: "warning", phase: "analyze", title: "arithmetic can fault" },
  E801: { severity: "error", phase: "emit", title: "signing failed" },
} as const satisfies Record<string, DiagnosticInfo>;

export type DiagnosticCode = keyof typeof DIAGNOSTICS;
