/**
 * The case-file format (docs/conformance.md, "Case files"), as TypeScript types. `cases/case.schema.json` is the
 * same format as JSON Schema; every file is validated against it when loaded, so these types hold for what the
 * loader returns.
 */

export type Surface = "a" | "b";

/** How the request authenticates (spec 5): the configured key, nothing, or a variant that must be refused. */
export type AuthVariant = "valid" | "none" | "wrong-key" | "not-bearer" | "empty-bearer";

export type HttpMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/** A body of exactly `bytes` bytes: `body` (default `{}`) padded with blanks, optionally sent chunked. */
export interface SizedBody {
  readonly bytes: number;
  readonly chunked?: boolean;
  readonly body?: unknown;
}

export interface RequestSpec {
  readonly method: HttpMethod;
  readonly path: string;
  readonly auth?: AuthVariant;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly rawBody?: string;
  readonly oversizeBody?: SizedBody;
}

export interface Repeat {
  readonly count: number;
  readonly concurrency?: number;
  /** Stop at the first answer with this status; the step's checks apply to that answer. */
  readonly until?: number;
}

export interface SignatureCheck {
  /** JSON pointer into the response body. */
  readonly at: string;
  readonly payloadType: string;
  /** `jcs-string`: the value is a string holding the signed object's canonical JSON. */
  readonly from?: "value" | "jcs-string";
  /** Further top-level members not covered by the signature. */
  readonly omit?: readonly string[];
}

export interface Expect {
  readonly status?: number | readonly number[];
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, unknown>>;
  readonly signatures?: readonly SignatureCheck[];
  /** Repeat steps: how many answers had each status (a number or a matcher); unlisted statuses must not occur. */
  readonly counts?: Readonly<Record<string, unknown>>;
}

export interface Step {
  readonly request: RequestSpec;
  readonly repeat?: Repeat;
  readonly expect: Expect;
  /** Capture name -> JSON pointer into the response body. */
  readonly capture?: Readonly<Record<string, string>>;
}

/** What a case may need beyond the base URL and API key; a case whose need is unmet is skipped. */
export type Requirement = "public-key";

export interface Case {
  readonly id: string;
  readonly section: string;
  readonly title: string;
  readonly requires?: readonly Requirement[];
  readonly runLast?: boolean;
  readonly steps: readonly Step[];
}

export interface CaseFile {
  readonly surface: Surface;
  readonly area: string;
  readonly title: string;
  readonly cases: readonly Case[];
}

/** A case as the runner sees it: with the file it came from. */
export interface LoadedCase extends Case {
  readonly file: string;
  readonly area: string;
}
