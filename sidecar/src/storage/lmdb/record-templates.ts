/**
 * The templates a data dir codes its decision records against (audit/record-coding.ts), in `audit-record-templates`:
 * ["id", n] the template numbered n (below MAX_TEMPLATES), ["key", key] a shape's number (`shapeOf`), "next" the next
 * number (docs/audit.md, "Coded decision records"). A shape's first record is kept in memory as a sample (and stored as
 * JSON); the second makes the template with it, written in a transaction of its own and numbered there, so processes
 * sharing a data dir agree on numbers.
 *
 * INVARIANT (a coded record's template is stored before it): a record coded against a template is queued after the
 * template's transaction committed, so it commits in a later transaction, and a flush that makes it durable makes the
 * template durable too; until then records of the shape are stored as JSON. Templates are never removed or changed: a
 * record coded against one reads with it for as long as it is kept.
 */
import { LmdbDurability } from "@writ/runtime/lmdb";
import type { Database, RootDatabase } from "lmdb";
import { hasDatabase } from "./named-databases.js";
import { MAX_CHAR_NUMBER, decodeRecord, encodeRecord, isCoded, templateOf, type RecordTemplate } from "../../audit/record-coding.js";

export const RECORD_TEMPLATES_DATABASE = "audit-record-templates";
/** Templates a data dir keeps at most (each about a record's size, all held in memory). */
export const MAX_TEMPLATES = Math.min(4_096, MAX_CHAR_NUMBER + 1);
const NEXT = "next";

type TemplateKey = string | [kind: "id", id: number] | [kind: "key", shape: string];

interface StoredTemplate {
  readonly key: string;
  readonly anchors: readonly string[];
}

/** What a shape has: a sample record waiting for a second, a template being written, a template, or none to have. */
type ShapeState =
  | { readonly kind: "sample"; readonly text: string }
  | { readonly kind: "writing" }
  | { readonly kind: "template"; readonly id: number; readonly template: RecordTemplate }
  | { readonly kind: "none" };

const registries = new WeakMap<RootDatabase, RecordTemplates>();

export class RecordTemplates {
  readonly #root: RootDatabase;
  /** Null in a read-only environment without the database: nothing there is coded. */
  readonly #db: Database<unknown, TemplateKey> | null;
  readonly #byId = new Map<number, RecordTemplate>();
  readonly #shapes = new Map<string, ShapeState>();

  /** The registry of `root`: one per environment, shared by its writers and readers. */
  static of(root: RootDatabase): RecordTemplates {
    let registry = registries.get(root);
    if (registry === undefined) {
      registry = new RecordTemplates(root);
      registries.set(root, registry);
    }
    return registry;
  }

  private constructor(root: RootDatabase) {
    this.#root = root;
    const readOnly = (root as { readOnly?: boolean }).readOnly === true;
    this.#db =
      readOnly && !hasDatabase(root, RECORD_TEMPLATES_DATABASE)
        ? null
        : root.openDB<unknown, TemplateKey>(RECORD_TEMPLATES_DATABASE, { encoding: "json" });
    // Few and small: all read now, and a shape finds its template without a read.
    for (const { key, value } of this.#db?.getRange({}) ?? []) {
      if (!Array.isArray(key) || key[0] !== "id") continue;
      const stored = value as StoredTemplate;
      const template: RecordTemplate = { anchors: stored.anchors };
      this.#byId.set(key[1] as number, template);
      this.#shapes.set(stored.key, { kind: "template", id: key[1] as number, template });
    }
  }

  /**
   * `text` coded against the template of `shape`, or null when the record is to be stored as JSON (its shape has no
   * template yet, or none fits): see the header.
   */
  encode(shape: string, text: string): string | null {
    const state = this.#shapes.get(shape);
    if (state?.kind === "template") return encodeRecord(text, state.id, state.template);
    if (state === undefined) {
      if (this.#shapes.size < MAX_TEMPLATES * 2) this.#shapes.set(shape, { kind: "sample", text });
    } else if (state.kind === "sample") {
      this.#shapes.set(shape, { kind: "writing" });
      // Not here: the caller may be inside a conditional write (the replay store's), where a transaction of lmdb-js
      // would join that write instead of committing on its own.
      queueMicrotask(() => this.#make(shape, state.text, text));
    }
    return null;
  }

  /** The JSON text of stored record bytes (after lmdb-js's own decompression): coded ones decoded, others as UTF-8. */
  text(bytes: Uint8Array): string {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
    return isCoded(bytes) ? decodeRecord(text, (id) => this.#template(id)) : text;
  }

  /** The JSON bytes of stored record bytes: the bytes the record log hashes. */
  jsonBytes(bytes: Buffer): Buffer {
    return isCoded(bytes) ? Buffer.from(this.text(bytes), "utf8") : bytes;
  }

  /** The template numbered `id`; read from the database when another process made it since this one read them. */
  #template(id: number): RecordTemplate {
    let template = this.#byId.get(id);
    if (template === undefined) {
      const stored = this.#db?.get(["id", id]) as StoredTemplate | undefined;
      if (stored === undefined) throw new Error(`a coded decision record names template ${id}, which this data dir does not hold`);
      template = { anchors: stored.anchors };
      this.#byId.set(id, template);
    }
    return template;
  }

  /** Makes the template of `shape` from two of its records, numbers and stores it, and uses it once committed. */
  #make(shape: string, first: string, second: string): void {
    const template = templateOf(first, second);
    if (template === null || this.#db === null) {
      this.#shapes.set(shape, { kind: "none" });
      return;
    }
    const db = this.#db;
    let written: Promise<number | null>;
    try {
      written = LmdbDurability.of(this.#root).commit(
        this.#root.transaction(() => {
          const existing = db.get(["key", shape]);
          if (typeof existing === "number") return existing;
          const id = (db.get(NEXT) as number | undefined) ?? 0;
          if (id >= MAX_TEMPLATES) return null;
          const stored: StoredTemplate = { key: shape, anchors: template.anchors };
          db.putSync(["id", id], stored);
          db.putSync(["key", shape], id);
          db.putSync(NEXT, id + 1);
          return id;
        }),
      );
    } catch {
      this.#shapes.set(shape, { kind: "sample", text: second });
      return;
    }
    written.then(
      (id) => {
        if (id === null) return this.#shapes.set(shape, { kind: "none" });
        // Another process's template of this shape, when it numbered one first.
        const adopted = this.#template(id);
        this.#shapes.set(shape, { kind: "template", id, template: adopted });
      },
      // Tried again with the next record of the shape.
      () => this.#shapes.set(shape, { kind: "sample", text: second }),
    );
  }
}
