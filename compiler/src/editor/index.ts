/** What editors, the language server and the playground read from the compiler: checks, names, hover, completion, rename, highlighting, decisions. */
export { checkSource, type CheckOptions, type SourceCheck } from "./check.js";
export { completionsAt, namesOf, type Completion, type NameCatalogue } from "./complete.js";
export {
  definitionAt,
  hoverAt,
  renameAt,
  renameTargetAt,
  type HoverInfo,
  type RenameResult,
  type RenameTarget,
  type TextEdit,
  type TextRange,
} from "./navigate.js";
export { BUILTIN_INFO, KEYWORD_INFO, OPERATOR_INFO, OPERATORS, type KeywordRole, type OperatorRole } from "./lexicon.js";
export { highlightSpans, type HighlightKind, type HighlightSpan } from "./highlight.js";
export { conditionsOf, explanationView, type ExplanationView, type ExprView, type RuleView } from "./explanation.js";
export { signalsDecider, type SignalsDecider, type SignalsOutcome } from "./decide.js";
export type { Occurrence, SymbolKind } from "./symbols.js";
