import { completionsAt, definitionAt, formatSource, hoverAt, renameAt, renameTargetAt, type Completion } from "@writ/compiler";
import {
  CompletionItemKind,
  LSPErrorCodes,
  MarkupKind,
  ResponseError,
  TextDocuments,
  TextDocumentSyncKind,
  type CompletionItem,
  type Connection,
  type InitializeResult,
} from "vscode-languageserver";
import { TextDocument } from "vscode-languageserver-textdocument";
import { toDiagnostic, toRange } from "./convert.js";
import { Checks } from "./documents.js";

export const SERVER_NAME = "writ-language-server";

const COMPLETION_KIND: Record<Completion["kind"], CompletionItemKind> = {
  signal: CompletionItemKind.Variable,
  constant: CompletionItemKind.Constant,
  function: CompletionItemKind.Function,
  keyword: CompletionItemKind.Keyword,
  zone: CompletionItemKind.Value,
};

/**
 * Serves the writ language over `connection`: diagnostics as the text changes, hover, go to definition,
 * completion, formatting and rename, each computed by the compiler (`@writ/compiler`'s editor entry points).
 */
export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  const checks = new Checks();
  let relatedInformation = false;

  connection.onInitialize((params): InitializeResult => {
    relatedInformation = params.capabilities.textDocument?.publishDiagnostics?.relatedInformation === true;
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        hoverProvider: true,
        definitionProvider: true,
        completionProvider: {},
        documentFormattingProvider: true,
        renameProvider: { prepareProvider: true },
      },
      serverInfo: { name: SERVER_NAME },
    };
  });

  const publish = (doc: TextDocument): void => {
    const diagnostics = checks.of(doc).diagnostics.map((d) => toDiagnostic(doc, d, relatedInformation));
    void connection.sendDiagnostics({ uri: doc.uri, version: doc.version, diagnostics });
  };
  documents.onDidChangeContent((e) => publish(e.document));
  documents.onDidClose((e) => {
    checks.forget(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  const open = (uri: string): TextDocument => {
    const doc = documents.get(uri);
    if (!doc) throw new ResponseError(LSPErrorCodes.RequestFailed, `\`${uri}\` is not open`);
    return doc;
  };

  connection.onHover(({ textDocument, position }) => {
    const doc = open(textDocument.uri);
    const hover = hoverAt(checks.of(doc), doc.offsetAt(position));
    return hover && { contents: { kind: MarkupKind.Markdown, value: hover.markdown }, range: toRange(doc, hover.range) };
  });

  connection.onDefinition(({ textDocument, position }) => {
    const doc = open(textDocument.uri);
    const target = definitionAt(checks.of(doc), doc.offsetAt(position));
    return target && { uri: doc.uri, range: toRange(doc, target) };
  });

  connection.onCompletion(({ textDocument, position }): CompletionItem[] => {
    const doc = open(textDocument.uri);
    // In the compiler's order: names, then functions, then keywords in the grammar's order.
    return completionsAt(checks.of(doc), doc.offsetAt(position), checks.namesOf(doc)).map((c, i) => ({
      label: c.label,
      kind: COMPLETION_KIND[c.kind],
      detail: c.detail,
      sortText: String(i).padStart(4, "0"),
      ...(c.replaces ? { textEdit: { range: toRange(doc, c.replaces), newText: c.label } } : {}),
      ...(c.doc ? { documentation: { kind: MarkupKind.Markdown, value: c.doc } } : {}),
    }));
  });

  connection.onDocumentFormatting(({ textDocument }) => {
    const doc = open(textDocument.uri);
    const text = doc.getText();
    const result = formatSource(doc.uri, text);
    if (!result.ok) {
      const first = result.errors[0];
      const where = first ? ` (${first.span.start.line}:${first.span.start.column}: ${first.message})` : "";
      throw new ResponseError(LSPErrorCodes.RequestFailed, `the policy has syntax errors; fix them before formatting${where}`);
    }
    if (result.text === text) return [];
    return [{ range: toRange(doc, { start: 0, end: text.length }), newText: result.text }];
  });

  connection.onPrepareRename(({ textDocument, position }) => {
    const doc = open(textDocument.uri);
    const target = renameTargetAt(checks.of(doc), doc.offsetAt(position));
    if (target === null) return null;
    if (!target.ok) throw new ResponseError(LSPErrorCodes.RequestFailed, target.message);
    return { range: toRange(doc, target.range), placeholder: target.name };
  });

  connection.onRenameRequest(({ textDocument, position, newName }) => {
    const doc = open(textDocument.uri);
    const result = renameAt(checks.of(doc), doc.offsetAt(position), newName);
    if (!result.ok) throw new ResponseError(LSPErrorCodes.RequestFailed, result.message);
    return { changes: { [doc.uri]: result.edits.map((e) => ({ range: toRange(doc, e.range), newText: e.newText })) } };
  });

  documents.listen(connection);
  connection.listen();
}
