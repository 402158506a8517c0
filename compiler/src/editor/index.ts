/** What editors and the language server read from the compiler: checks, names, hover, completion, rename. */
export { checkSource, type SourceCheck } from "./check.js";
export { completionsAt, namesOf, type Completion, type NameCatalogue } from "./complete.js";
export { definitionAt, hoverAt, renameAt, renameTargetAt, type HoverInfo, type RenameResult, type RenameTarget, type TextEdit, type TextRange } from "./navigate.js";
export { BUILTIN_INFO, KEYWORD_INFO, OPERATOR_INFO, OPERATORS, type KeywordRole, type OperatorRole } from "./lexicon.js";
export type { Occurrence, SymbolKind } from "./symbols.js";
