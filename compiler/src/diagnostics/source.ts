/** A position in a source file: 0-based UTF-16 offset, 1-based line and column. */
export interface Position {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
}

/** A half-open range of source text: `end` is the position just past the last character. */
export interface Span {
  readonly start: Position;
  readonly end: Position;
}

export interface SourceFile {
  readonly path: string;
  readonly text: string;
}

/** Line starts, computed once per file so positions and excerpts are cheap. */
export class LineIndex {
  private readonly starts: number[] = [0];
  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) this.starts.push(i + 1);
      else if (c === 13 && text.charCodeAt(i + 1) !== 10) this.starts.push(i + 1);
    }
  }

  position(offset: number): Position {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] ?? 0) <= clamped) lo = mid;
      else hi = mid - 1;
    }
    return { offset: clamped, line: lo + 1, column: clamped - (this.starts[lo] ?? 0) + 1 };
  }

  span(startOffset: number, endOffset: number): Span {
    return { start: this.position(startOffset), end: this.position(Math.max(startOffset, endOffset)) };
  }

  /** The text of a 1-based line without its line terminator. */
  lineText(line: number): string {
    const start = this.starts[line - 1];
    if (start === undefined) return "";
    const next = this.starts[line];
    return this.text.slice(start, next ?? this.text.length).replace(/\r?\n$|\r$/, "");
  }
}
