import { checkSource, namesOf, type NameCatalogue, type SourceCheck } from "@writ/compiler";
import type { TextDocument } from "vscode-languageserver-textdocument";

interface Entry {
  readonly version: number;
  readonly check: SourceCheck;
}

/**
 * The check of each open document, computed once per version, and the names of the last version that
 * parsed: completion offers them while the text being typed does not parse.
 */
export class Checks {
  private readonly entries = new Map<string, Entry>();
  private readonly names = new Map<string, NameCatalogue>();

  of(doc: TextDocument): SourceCheck {
    const cached = this.entries.get(doc.uri);
    if (cached && cached.version === doc.version) return cached.check;
    const check = checkSource(doc.uri, doc.getText());
    this.entries.set(doc.uri, { version: doc.version, check });
    const names = namesOf(check);
    if (names) this.names.set(doc.uri, names);
    return check;
  }

  /** The signals and constants of the last version of the document that parsed. */
  namesOf(doc: TextDocument): NameCatalogue | null {
    this.of(doc);
    return this.names.get(doc.uri) ?? null;
  }

  forget(uri: string): void {
    this.entries.delete(uri);
    this.names.delete(uri);
  }
}
