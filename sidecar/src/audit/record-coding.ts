/**
 * A decision record's JSON text coded against a template of its shape, in pure functions (the templates a data dir
 * keeps: record-templates.ts). docs/audit.md, "Coded decision records" gives the format and why no compression library:
 * most of a record is the same in every record of one policy, rule and bundle, and finding a template's anchors is a
 * few native `String#indexOf` calls (cost: docs/benchmarks.md, "Record pages").
 *
 * INVARIANT (coding is lossless): `decodeRecord(encodeRecord(text, id, t), () => t)` is `text` for every well-formed
 * string `text` and every template `t`: the gaps and anchors in order, each anchor marked present or absent, join back
 * to `text`. A lone surrogate in a gap is stored as UTF-8 stores it (U+FFFD), so a coded record reads back as the bytes
 * its JSON form would have stored: the bytes the record log hashes. CODED (U+0001) starts no JSON text, nor any value
 * lmdb-js compressed; a number is one character n + 1, above U+0000 (no PostgreSQL text holds it), below the surrogates.
 */

export const CODED = 0x01;
const CODED_CHAR = String.fromCharCode(CODED);
const OP = 0x30;
const EMPTY = 0;
const TEXT = 1;
const REF = 2;
const ABSENT = 4;
/** Larger numbers (a gap's length, a template's id) do not fit one character above U+0000 and below the surrogates. */
export const MAX_CHAR_NUMBER = 0xd7fe;
/** Anchors shorter than this are left in the gaps: they would be found in the wrong places. */
const MIN_ANCHOR = 4;
/** Gaps shorter than this are not looked up among the earlier ones. */
const MIN_REF = 8;

export interface RecordTemplate {
  /** The runs of text two records of this shape share, in order. */
  readonly anchors: readonly string[];
}

/**
 * The template of two records of one shape: the tokens (pieces between quotes) they share at the same places, as runs
 * with their quotes, each at least MIN_ANCHOR long. Null when they share no such run.
 */
export function templateOf(first: string, second: string): RecordTemplate | null {
  const a = first.split('"');
  const b = second.split('"');
  const anchors: string[] = [];
  let start = -1;
  const close = (end: number) => {
    if (start < 0) return;
    // With the quote before the run (but at the text's start) and after it (but at the text's end).
    const text = `${start === 0 ? "" : '"'}${a.slice(start, end).join('"')}${end === a.length ? "" : '"'}`;
    if (text.length >= MIN_ANCHOR) anchors.push(text);
    start = -1;
  };
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) {
      if (start < 0) start = i;
    } else {
      close(i);
    }
  }
  close(a.length);
  return anchors.length === 0 ? null : { anchors };
}

/** `text` coded against `template`, whose id is `id`; null when a number does not fit its character. */
export function encodeRecord(text: string, id: number, template: RecordTemplate): string | null {
  if (id > MAX_CHAR_NUMBER) return null;
  const { anchors } = template;
  let coded = CODED_CHAR + numberChar(id);
  const earlier: string[] = [];
  let from = 0;
  for (let i = 0; i <= anchors.length; i++) {
    const anchor = anchors[i];
    const found = anchor === undefined ? text.length : text.indexOf(anchor, from);
    if (found < 0) {
      // Left in the next gap, with the text from here on.
      coded += String.fromCharCode(OP + EMPTY + ABSENT);
      earlier.push("");
      continue;
    }
    const gap = text.slice(from, found);
    const first = gap.length >= MIN_REF ? earlier.indexOf(gap) : -1;
    earlier.push(gap);
    if (gap.length === 0) coded += String.fromCharCode(OP + EMPTY);
    else if (first >= 0) coded += String.fromCharCode(OP + REF) + numberChar(first);
    else if (gap.length > MAX_CHAR_NUMBER) return null;
    else coded += String.fromCharCode(OP + TEXT) + numberChar(gap.length) + gap;
    if (anchor !== undefined) from = found + anchor.length;
  }
  return coded;
}

/** Whether stored bytes are a coded record (else JSON, or a value lmdb-js decompressed). */
export function isCoded(bytes: Uint8Array): boolean {
  return bytes[0] === CODED;
}

/** Whether a stored text is a coded record (else JSON). */
export function isCodedText(text: string): boolean {
  return text.charCodeAt(0) === CODED;
}

/** The id of the template a coded record (its text) was coded against. */
export function templateIdOf(coded: string): number {
  return coded.charCodeAt(1) - 1;
}

/** `n` as one character, U+0001 for 0: no coded record holds U+0000 (a PostgreSQL text cannot). */
function numberChar(n: number): string {
  return String.fromCharCode(n + 1);
}

/**
 * The JSON text of a coded record (its UTF-8 decoded); `template` answers the template its id names.
 * @throws Error when the text is not a coded record of that template
 */
export function decodeRecord(coded: string, template: (id: number) => RecordTemplate): string {
  if (coded.charCodeAt(0) !== CODED || coded.length < 2) throw new Error("not a coded decision record");
  const { anchors } = template(templateIdOf(coded));
  const earlier: string[] = [];
  let text = "";
  let at = 2;
  for (let i = 0; i <= anchors.length; i++) {
    const op = coded.charCodeAt(at++) - OP;
    let gap: string;
    switch (op & ~ABSENT) {
      case EMPTY:
        gap = "";
        break;
      case TEXT: {
        const length = coded.charCodeAt(at++) - 1;
        gap = coded.slice(at, at + length);
        if (gap.length !== length) throw new Error("a coded decision record ends early");
        at += length;
        break;
      }
      case REF: {
        const first = coded.charCodeAt(at++) - 1;
        if (!(first < earlier.length)) throw new Error("a coded decision record refers to a gap after its own");
        gap = earlier[first]!;
        break;
      }
      default:
        throw new Error(`a coded decision record holds an unknown operation (${op})`);
    }
    earlier.push(gap);
    text += gap;
    if (i < anchors.length && (op & ABSENT) === 0) text += anchors[i]!;
  }
  if (at !== coded.length) throw new Error("a coded decision record runs past its template");
  return text;
}

/** What a record's shape needs of it: the decision record's members that its template is the same for. */
export interface ShapedRecord {
  readonly endpoint: string;
  readonly status: string;
  readonly ruleMatched: string;
  readonly attestation: { readonly policyId: string };
}

/**
 * The shape of a decision record, whose records share a template: what makes the text of two records the same but for
 * their own values (endpoint, status, rule, policy, version, bundle).
 */
export function shapeOf(record: ShapedRecord): string {
  const attestation = record.attestation as {
    readonly policyId: string;
    readonly policyVersion?: string;
    readonly provenance?: { readonly bundleHash?: string };
    readonly bundleHash?: string;
  };
  const bundle = attestation.provenance?.bundleHash ?? attestation.bundleHash ?? "";
  return `${record.endpoint}\n${record.status}\n${record.ruleMatched}\n${attestation.policyId}\n${attestation.policyVersion ?? ""}\n${bundle}`;
}
