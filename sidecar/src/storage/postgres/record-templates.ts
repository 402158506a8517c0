/**
 * The templates the fleet codes its decision records against (audit/record-coding.ts; docs/audit.md, "Coded decision
 * records"), in `writ_audit_record_templates` (migration 6): one row per record shape, numbered, never changed or
 * removed, shared by every sidecar of the fleet. A shape gets its template as on LMDB (storage/lmdb/record-templates.ts),
 * inserted by a statement of its own with the next free number (`ON CONFLICT DO NOTHING`: a sidecar that lost the
 * number or the shape to another reads the shape's row, or tries again with a later record).
 *
 * INVARIANT (a coded record's template is stored before it): a record coded against a template is inserted after the
 * template's row committed, so no committed record names a template that is not. Readers decode what they read
 * (`texts`), loading templates other sidecars made since; a body that does not decode (changed by hand) reads as
 * stored, so the record log's verification reports it altered.
 */
import type pg from "pg";
import {
  MAX_CHAR_NUMBER,
  decodeRecord,
  encodeRecord,
  isCodedText,
  templateIdOf,
  templateOf,
  type RecordTemplate,
} from "../../audit/record-coding.js";
import { query } from "./connection/query.js";

export const RECORD_TEMPLATES_TABLE = "writ_audit_record_templates";
/** Templates a fleet keeps at most (each about a record's size, all held in memory). */
const MAX_TEMPLATES = Math.min(4_096, MAX_CHAR_NUMBER + 1);

type ShapeState =
  | { readonly kind: "sample"; readonly text: string }
  | { readonly kind: "writing" }
  | { readonly kind: "template"; readonly id: number; readonly template: RecordTemplate }
  | { readonly kind: "none" };

interface TemplateRow {
  readonly id: number;
  readonly shape: string;
  readonly anchors: string;
}

export class PostgresRecordTemplates {
  readonly #pool: pg.Pool;
  readonly #byId = new Map<number, RecordTemplate>();
  readonly #shapes = new Map<string, ShapeState>();

  /** The templates of the database behind `pool`, all read now (they are few). */
  static async open(pool: pg.Pool): Promise<PostgresRecordTemplates> {
    const templates = new PostgresRecordTemplates(pool);
    const { rows } = await query<TemplateRow>(
      pool,
      "reading the audit record templates",
      `SELECT id, shape, anchors FROM ${RECORD_TEMPLATES_TABLE}`,
    );
    for (const row of rows) templates.#adopt(row);
    return templates;
  }

  private constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** `text` coded against the template of `shape`, or null when it is to be stored as JSON (see the header). */
  encode(shape: string, text: string): string | null {
    const state = this.#shapes.get(shape);
    if (state?.kind === "template") return encodeRecord(text, state.id, state.template);
    if (state === undefined) {
      if (this.#shapes.size < MAX_TEMPLATES * 2) this.#shapes.set(shape, { kind: "sample", text });
    } else if (state.kind === "sample") {
      this.#shapes.set(shape, { kind: "writing" });
      void this.#make(shape, state.text, text);
    }
    return null;
  }

  /**
   * The JSON texts of stored bodies, in order (null stays null): coded ones decoded, others as they are. A coded body that
   * does not decode (its template unknown, or the body changed by hand) is answered as stored.
   */
  async texts(bodies: readonly (string | null)[], db: pg.Pool | pg.PoolClient = this.#pool): Promise<(string | null)[]> {
    await this.load(bodies, db);
    return bodies.map((body) => this.text(body));
  }

  /** Reads the templates `bodies` are coded against that this sidecar does not hold yet: `text` then decodes each of them. */
  async load(bodies: readonly (string | null)[], db: pg.Pool | pg.PoolClient = this.#pool): Promise<void> {
    const missing = new Set<number>();
    for (const body of bodies)
      if (body !== null && isCodedText(body) && !this.#byId.has(templateIdOf(body))) missing.add(templateIdOf(body));
    if (missing.size === 0) return;
    const { rows } = await query<TemplateRow>(
      db,
      "reading the audit record templates",
      `SELECT id, shape, anchors FROM ${RECORD_TEMPLATES_TABLE} WHERE id = ANY($1::int[])`,
      [[...missing]],
    );
    for (const row of rows) this.#adopt(row);
  }

  /** The JSON text of one stored body, as `texts` answers it, from the templates held (`load` reads the others). */
  text(body: string | null): string | null {
    if (body === null || !isCodedText(body)) return body;
    try {
      return decodeRecord(body, (id) => this.#template(id));
    } catch {
      return body;
    }
  }

  #template(id: number): RecordTemplate {
    const template = this.#byId.get(id);
    if (template === undefined) throw new Error(`a coded decision record names template ${id}, which the database does not hold`);
    return template;
  }

  #adopt(row: TemplateRow): void {
    const template: RecordTemplate = { anchors: JSON.parse(row.anchors) as string[] };
    this.#byId.set(row.id, template);
    this.#shapes.set(row.shape, { kind: "template", id: row.id, template });
  }

  /** Makes the template of `shape` from two of its records and inserts it; used once committed (see the header). */
  async #make(shape: string, first: string, second: string): Promise<void> {
    const template = templateOf(first, second);
    if (template === null) {
      this.#shapes.set(shape, { kind: "none" });
      return;
    }
    try {
      await query(
        this.#pool,
        "writing an audit record template",
        `INSERT INTO ${RECORD_TEMPLATES_TABLE} (id, shape, anchors)
         SELECT coalesce(max(id) + 1, 0), $1, $2 FROM ${RECORD_TEMPLATES_TABLE} HAVING coalesce(max(id) + 1, 0) < $3
         ON CONFLICT DO NOTHING`,
        [shape, JSON.stringify(template.anchors), MAX_TEMPLATES],
      );
      const { rows } = await query<TemplateRow>(
        this.#pool,
        "reading an audit record template",
        `SELECT id, shape, anchors FROM ${RECORD_TEMPLATES_TABLE} WHERE shape = $1`,
        [shape],
      );
      // The number taken by another shape meanwhile, or none left: tried again with a later record of the shape.
      if (rows[0] === undefined) this.#shapes.set(shape, { kind: "sample", text: second });
      else this.#adopt(rows[0]);
    } catch {
      this.#shapes.set(shape, { kind: "sample", text: second });
    }
  }
}
