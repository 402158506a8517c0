/**
 * The language server driven over its protocol, as an editor drives it: JSON-RPC requests and notifications
 * from an LSP client, answers checked against what the compiler says of the same text.
 */
import { compile, formatSource } from "@writ/compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CompletionItemKind,
  CompletionRequest,
  DefinitionRequest,
  DiagnosticSeverity,
  DocumentFormattingRequest,
  HoverRequest,
  LSPErrorCodes,
  PrepareRenameRequest,
  RenameRequest,
  ResponseError,
  type CompletionItem,
  type MarkupContent,
  type Position,
  type TextEdit,
} from "vscode-languageserver-protocol/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { inProcessSession, type Session } from "./support/session.js";

// Non-ASCII text (an emoji is two UTF-16 code units, one code point) before names on the same line, so a
// position counted in code points or bytes instead of UTF-16 code units would land elsewhere.
const FIXED = `# Überweisungen 💶
policy "demo.transfer" version "1.0.0"

governs "transfer.execute" binding amount

signals {
  # In major units — €, £ or $.
  amount: number > 0
  currency: "USD" | "EUR"
  note?: string length 0..140
}

const LIMIT = 1000
const LOCAL = ["EUR"]

rule big when amount > LIMIT reject "zu groß 💶"
rule foreign when note == "💶💶" and currency not in LOCAL escalate "réservé"
otherwise approve "ok"
`;
const BROKEN = FIXED.replace('note == "💶💶" and currency', 'note == "💶💶" and curency');
const URI = "file:///work/demo/policy.writ";

/** The LSP position of the `nth` occurrence of `needle` in `text`, in UTF-16 code units as LSP counts. */
function positionOf(text: string, needle: string, nth = 0, shift = 0): Position {
  let offset = -1;
  for (let i = 0; i <= nth; i++) offset = text.indexOf(needle, offset + 1);
  if (offset < 0) throw new Error(`\`${needle}\` not in the text`);
  return TextDocument.create(URI, "writ", 1, text).positionAt(offset + shift);
}

function apply(text: string, edits: readonly TextEdit[]): string {
  return TextDocument.applyEdits(TextDocument.create(URI, "writ", 1, text), [...edits]);
}

describe("the writ language server", () => {
  let s: Session;
  beforeAll(async () => {
    s = await inProcessSession();
  });
  afterAll(async () => {
    await s.close();
  });

  it("announces what it serves", () => {
    expect(s.initialized.serverInfo?.name).toBe("writ-language-server");
    expect(s.initialized.capabilities).toMatchObject({
      hoverProvider: true,
      definitionProvider: true,
      documentFormattingProvider: true,
      renameProvider: { prepareProvider: true },
    });
  });

  it("publishes the compiler's diagnostics as the text changes: code, severity, UTF-16 range, notes", async () => {
    const opened = await s.open(URI, BROKEN);
    // The misspelt name, and so the signal nothing uses any more.
    expect(opened.diagnostics.map((d) => d.code)).toEqual(["W401", "E404"]);
    expect(compile(URI, BROKEN).errors.map((e) => e.code)).toEqual(["E404"]);
    const d = opened.diagnostics[1];
    const start = positionOf(BROKEN, "curency");
    expect(d).toMatchObject({
      code: "E404",
      severity: DiagnosticSeverity.Error,
      source: "writ",
      message: "unknown name `curency`",
      range: { start, end: { line: start.line, character: start.character + "curency".length } },
      relatedInformation: [{ location: { uri: URI, range: d!.range }, message: "did you mean `currency`?" }],
    });
    // The line has two emoji before the name: UTF-16 counts them twice each, code points once.
    const line = BROKEN.split("\n")[start.line]!;
    expect(start.character).toBe(line.indexOf("curency"));
    expect([...line.slice(0, start.character)].length).toBe(start.character - 2);

    const fixed = await s.change(URI, 2, [
      { range: { start, end: { line: start.line, character: start.character + 7 } }, text: "currency" },
    ]);
    expect(fixed.diagnostics).toEqual([]);
  });

  it("publishes E310 on a pattern the runtime's linear-time engine refuses, as the compiler reports it", async () => {
    const uri = "file:///work/regex/policy.writ";
    const text = FIXED.replace('note == "💶💶"', "note matches /^(\\w+) \\1$/");
    const { diagnostics } = await s.open(uri, text);
    const [error] = compile(uri, text).errors;
    const start = positionOf(text, "/^(");
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: "E310",
        severity: DiagnosticSeverity.Error,
        message: "backreference `\\1` cannot be matched in linear time: repeat the group's pattern instead",
        range: { start, end: { line: start.line, character: start.character + "/^(\\w+) \\1$/".length } },
      }),
    ]);
    expect(error).toMatchObject({ code: "E310", message: diagnostics[0]!.message });
  });

  it("puts the notes into the message for a client that shows no related information", async () => {
    const plain = await inProcessSession({});
    try {
      const { diagnostics } = await plain.open(URI, BROKEN);
      expect(diagnostics[1]).toMatchObject({ code: "E404", message: "unknown name `curency`\ndid you mean `currency`?" });
      expect(diagnostics[1]!.relatedInformation).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it("reports warnings as warnings, faded where the code has no effect", async () => {
    const uri = "file:///work/unused/policy.writ";
    const { diagnostics } = await s.open(uri, FIXED.replace("const LOCAL", "const UNUSED = 1\nconst LOCAL"));
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: "W402",
        severity: DiagnosticSeverity.Warning,
        tags: [1],
        range: expect.objectContaining({ start: { line: 13, character: 6 } }),
      }),
    ]);
  });

  const hover = async (needle: string, nth = 0, shift = 1): Promise<string | null> => {
    const h = await s.client.sendRequest(HoverRequest.type, {
      textDocument: { uri: URI },
      position: positionOf(FIXED, needle, nth, shift),
    });
    return h ? (h.contents as MarkupContent).value : null;
  };

  it("describes a signal on hover: its declaration, type, schema and doc comment", async () => {
    const text = await hover("amount", 2);
    expect(text).toContain("amount: number > 0");
    expect(text).toContain("required signal; type in conditions: `number`");
    expect(text).toContain('schema: `{"type":"number","exclusiveMinimum":0}`');
    expect(text).toContain("In major units — €, £ or $.");
    expect(await hover("note ==")).toContain("optional signal");
  });

  it("describes a constant, a function, a keyword and an operator on hover; nothing on a string", async () => {
    expect(await hover("LOCAL escalate")).toContain('const LOCAL = ["EUR"]');
    expect(await hover("LOCAL escalate")).toContain("constant: list of string");
    expect(await hover("LIMIT reject")).toContain("constant: integer");
    expect(await hover("otherwise")).toContain("decides when no rule does");
    expect(await hover("> LIMIT", 0, 0)).toContain("greater than");
    expect(await hover("zu groß")).toBeNull();
  });

  it("goes from a use of a signal or constant to its declaration", async () => {
    const definition = async (needle: string, nth = 0) =>
      s.client.sendRequest(DefinitionRequest.type, { textDocument: { uri: URI }, position: positionOf(FIXED, needle, nth, 1) });
    const declared = (name: string, after: string) => {
      const start = positionOf(FIXED, `${name}${after}`);
      return { uri: URI, range: { start, end: { line: start.line, character: start.character + name.length } } };
    };
    expect(await definition("LIMIT reject")).toEqual(declared("LIMIT", " ="));
    expect(await definition("currency not")).toEqual(declared("currency", ":"));
    expect(await definition("amount", 0)).toEqual(declared("amount", ":"));
    expect(await definition("reject")).toBeNull();
  });

  const complete = async (uri: string, at: Position): Promise<string[]> => {
    const items = (await s.client.sendRequest(CompletionRequest.type, { textDocument: { uri }, position: at })) as CompletionItem[];
    return items.sort((a, b) => (a.sortText! < b.sortText! ? -1 : 1)).map((i) => i.label);
  };

  it("completes signal and constant names, functions and keywords where the grammar allows them", async () => {
    const uri = "file:///work/typing/policy.writ";
    // A rule being typed: the text does not parse, so names come from the last version that did.
    await s.open(uri, FIXED);
    const typing = FIXED.replace('otherwise approve "ok"', "rule r when am");
    await s.change(uri, 2, [{ text: typing }]);
    const atName = await complete(uri, positionOf(typing, "when am", 0, 7));
    expect(atName).toEqual([
      "amount",
      "currency",
      "note",
      "LIMIT",
      "LOCAL",
      "len",
      "lower",
      "abs",
      "min",
      "max",
      "weekday",
      "local_hour",
      "local_minute_of_day",
      "present",
      "not",
      "true",
      "false",
      "now",
    ]);

    const afterCondition = FIXED.replace('rule big when amount > LIMIT reject "zu groß 💶"', "rule big when amount > LIMIT ");
    await s.change(uri, 3, [{ text: afterCondition }]);
    expect(await complete(uri, positionOf(afterCondition, "LIMIT \n", 0, 6))).toEqual(["and", "or", "approve", "escalate", "reject"]);

    expect(await complete(URI, positionOf(FIXED, "binding amount", 0, 8))).toEqual(["amount", "currency", "note"]);
    // A list holds literals and scalar constants, not list constants or signals.
    expect(await complete(URI, positionOf(FIXED, '"EUR"]'))).toEqual(["LIMIT", "true", "false"]);
    expect(await complete(URI, positionOf(FIXED, "number > 0"))).toEqual([
      "string",
      "number",
      "integer",
      "decimal",
      "boolean",
      "timestamp",
      "semver",
      "ip",
    ]);
    expect(await complete(URI, positionOf(FIXED, "zu groß", 0, 2))).toEqual([]);
  });

  it("completes zone names inside a calendar field's zone argument, as values", async () => {
    const uri = "file:///work/zones/policy.writ";
    const text = FIXED.replace("  note?: string length 0..140", "  note?: string length 0..140\n  at: timestamp").replace(
      'otherwise approve "ok"',
      'rule late when local_hour(at, "America/New_Y") > 17 escalate "late"\notherwise approve "ok"',
    );
    await s.open(uri, text);
    const at = positionOf(text, '"America/New_Y"', 0, 14);
    const items = (await s.client.sendRequest(CompletionRequest.type, { textDocument: { uri }, position: at })) as CompletionItem[];
    expect(items.map((i) => [i.label, i.kind])).toEqual([["America/New_York", CompletionItemKind.Value]]);
    // It replaces the whole name typed, `America/New_Y`, not only the word after the slash.
    expect(items[0]!.textEdit).toEqual({
      range: { start: positionOf(text, '"America/New_Y"', 0, 1), end: at },
      newText: "America/New_York",
    });
  });

  it("formats with the compiler's formatter, and refuses a policy with syntax errors", async () => {
    const uri = "file:///work/format/policy.writ";
    const messy = FIXED.replace("rule big when amount > LIMIT", "rule   big when (amount)>LIMIT").replace(
      "  currency:",
      "        currency :",
    );
    await s.open(uri, messy);
    const edits = await s.client.sendRequest(DocumentFormattingRequest.type, {
      textDocument: { uri },
      options: { tabSize: 2, insertSpaces: true },
    });
    expect(apply(messy, edits!)).toBe(FIXED);
    expect(formatSource(uri, FIXED)).toEqual({ ok: true, text: FIXED });

    const broken = messy.replace("otherwise approve", "otherwise maybe");
    await s.change(uri, 2, [{ text: broken }]);
    const refused = s.client.sendRequest(DocumentFormattingRequest.type, {
      textDocument: { uri },
      options: { tabSize: 2, insertSpaces: true },
    });
    await expect(refused).rejects.toBeInstanceOf(ResponseError);
    await expect(refused).rejects.toMatchObject({
      code: LSPErrorCodes.RequestFailed,
      message:
        "the policy has syntax errors; fix them before formatting (18:11: expected `approve`, `escalate` or `reject`, found `maybe`)",
    });
  });

  it("renames a signal everywhere it is named, the binding included, into a policy that still compiles", async () => {
    const at = positionOf(FIXED, "amount", 2, 2);
    const prepared = await s.client.sendRequest(PrepareRenameRequest.type, { textDocument: { uri: URI }, position: at });
    expect(prepared).toEqual({
      range: { start: positionOf(FIXED, "amount", 2), end: positionOf(FIXED, "amount", 2, 6) },
      placeholder: "amount",
    });
    const edit = await s.client.sendRequest(RenameRequest.type, { textDocument: { uri: URI }, position: at, newName: "total" });
    const renamed = apply(FIXED, edit!.changes![URI]!);
    expect(renamed).toBe(FIXED.replace(/\bamount\b/g, "total"));
    expect(compile(URI, renamed).valid).toBe(true);
  });

  it("renames a constant and a rule", async () => {
    const rename = async (needle: string, newName: string) =>
      apply(
        FIXED,
        (await s.client.sendRequest(RenameRequest.type, {
          textDocument: { uri: URI },
          position: positionOf(FIXED, needle, 0, 1),
          newName,
        }))!.changes![URI]!,
      );
    expect(await rename("LOCAL escalate", "HOME")).toBe(FIXED.replace(/\bLOCAL\b/g, "HOME"));
    expect(await rename("foreign", "abroad")).toBe(FIXED.replace("rule foreign", "rule abroad"));
  });

  it("refuses a new name that is not a name, is reserved or is taken, and what cannot be renamed, saying why", async () => {
    const refusal = (needle: string, newName: string) =>
      s.client.sendRequest(RenameRequest.type, { textDocument: { uri: URI }, position: positionOf(FIXED, needle, 0, 1), newName }).then(
        () => "accepted",
        (e: ResponseError<unknown>) => `${e.code}: ${e.message}`,
      );
    const failed = LSPErrorCodes.RequestFailed;
    expect(await refusal("amount", "9lives")).toBe(
      `${failed}: \`9lives\` is not a name: names are ASCII letters, digits and \`_\`, and do not start with a digit`,
    );
    expect(await refusal("amount", "when")).toBe(`${failed}: \`when\` is a reserved word and cannot be a name`);
    expect(await refusal("amount", "currency")).toBe(`${failed}: \`currency\` is already declared as a signal`);
    expect(await refusal("amount", "LIMIT")).toBe(`${failed}: \`LIMIT\` is already declared as a constant`);
    expect(await refusal("foreign", "big")).toBe(`${failed}: \`big\` is already declared as a rule`);
    expect(await refusal("foreign", "amount")).toBe("accepted");

    const withCall = FIXED.replace("amount > LIMIT", "len(note) > LIMIT");
    const uri = "file:///work/call/policy.writ";
    await s.open(uri, withCall);
    const prepare = s.client.sendRequest(PrepareRenameRequest.type, {
      textDocument: { uri },
      position: positionOf(withCall, "len(", 0, 1),
    });
    await expect(prepare).rejects.toMatchObject({ message: "`len` is a built-in function and cannot be renamed" });
  });
});
