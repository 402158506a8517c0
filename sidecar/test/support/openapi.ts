/**
 * Answers checked against a surface's OpenAPI document (docs/openapi/): the operation of the request's method and path,
 * the response of the answer's status, its media type and its schema (JSON Schema 2020-12, with formats). An answer
 * whose status the operation does not document is a problem, and so is a body where the document has none (HEAD); a
 * request no operation matches (a route that does not exist, a method a path does not have) is not checked. The test supports record every answer of a suite and check
 * them when the sidecar closes (e2e.ts, surface-b/support.ts).
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { OPENAPI_DOCUMENTS, type OpenApiDocumentName } from "../../src/openapi-documents.js";

export interface RecordedAnswer {
  readonly method: string;
  /** The request path, with its query string. */
  readonly path: string;
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

interface Content {
  readonly schema?: object;
}
interface OperationObject {
  readonly responses: Readonly<Record<string, { readonly content?: Readonly<Record<string, Content>> }>>;
}
interface OpenApiDocument {
  readonly paths: Readonly<Record<string, Readonly<Record<string, OperationObject>>>>;
  readonly components: object;
}

/** `/a/{b}` as a regular expression of the paths it takes: a parameter is one non-empty segment. */
function matcherOf(template: string): RegExp {
  const pattern = template
    .split(/\{[^}]+\}/)
    .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
    .join("[^/]+");
  return new RegExp(`^${pattern}$`);
}

export class AnswerChecker {
  readonly #document: OpenApiDocument;
  readonly #paths: readonly { readonly template: string; readonly matcher: RegExp }[];
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly #validators = new Map<object, ValidateFunction>();

  constructor(name: OpenApiDocumentName) {
    this.#document = OPENAPI_DOCUMENTS[name]() as unknown as OpenApiDocument;
    this.#paths = Object.keys(this.#document.paths).map((template) => ({ template, matcher: matcherOf(template) }));
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.#ajv);
  }

  /** The operation `method path` is, if any. */
  operationOf(method: string, path: string): { readonly route: string; readonly operation: OperationObject } | undefined {
    const bare = path.split("?", 1)[0] ?? "";
    const verb = method.toLowerCase();
    const found = this.#paths.find(({ matcher, template }) => matcher.test(bare) && this.#document.paths[template]?.[verb] !== undefined);
    return found === undefined
      ? undefined
      : { route: `${method} ${found.template}`, operation: this.#document.paths[found.template]![verb]! };
  }

  /** What is wrong with `answer` by the document; null when it is what the document says, or no operation matches. */
  problemOf(answer: RecordedAnswer): string | null {
    const found = this.operationOf(answer.method, answer.path);
    if (found === undefined) return null;
    const at = `${answer.method} ${answer.path} answered ${answer.status}`;
    const response = found.operation.responses[String(answer.status)];
    if (response === undefined) return `${at}: ${found.route} does not document ${answer.status}`;
    if (response.content === undefined) return answer.text === "" ? null : `${at}: documented without a body, answered one`;
    const type = answer.contentType.split(";", 1)[0]!.trim();
    const content = response.content?.[type];
    if (content === undefined) return `${at} as \`${type}\`: documented as ${Object.keys(response.content).join(", ")}`;
    if (content.schema === undefined) return null;
    let body: unknown = answer.text;
    if (type === "application/json") {
      try {
        body = JSON.parse(answer.text);
      } catch {
        return `${at}: the body is not JSON`;
      }
    }
    const validate = this.#validatorOf(content.schema);
    if (validate(body)) return null;
    return `${at}: ${this.#ajv.errorsText(validate.errors, { dataVar: "body" })}\n  body: ${answer.text.slice(0, 2_000)}`;
  }

  /** Every problem of `answers`. */
  problemsOf(answers: readonly RecordedAnswer[]): string[] {
    return answers.map((answer) => this.problemOf(answer)).filter((problem) => problem !== null);
  }

  #validatorOf(schema: object): ValidateFunction {
    let validate = this.#validators.get(schema);
    if (validate === undefined) {
      // The document's `#/components/schemas/...` references resolve against the root of the schema compiled.
      validate = this.#ajv.compile({ ...schema, components: this.#document.components });
      this.#validators.set(schema, validate);
    }
    return validate;
  }
}

const checkers = new Map<OpenApiDocumentName, AnswerChecker>();

/** The checker of document `name`, made once per test file. */
export function checkerOf(name: OpenApiDocumentName): AnswerChecker {
  let checker = checkers.get(name);
  if (checker === undefined) checkers.set(name, (checker = new AnswerChecker(name)));
  return checker;
}

/** Throws, listing every answer the document does not describe. */
export function assertDocumented(checker: AnswerChecker, answers: readonly RecordedAnswer[]): void {
  const problems = checker.problemsOf(answers);
  if (problems.length > 0) throw new Error(`${problems.length} answer(s) not as the OpenAPI document says:\n${problems.join("\n")}`);
}
