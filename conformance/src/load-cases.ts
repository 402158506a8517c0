/**
 * Loading the case files of one surface: `{casesDir}/surface-{a,b}/*.json` in name order, each parsed strictly,
 * validated against `case.schema.json`, then checked for what a schema cannot say (ids unique and named after their
 * file, operators and templates known, captures defined before use, signature checks only in cases that require the
 * public key). A malformed file is an error naming the file and the JSON pointer, never a skipped case.
 */
import { readdir, readFile } from "node:fs/promises";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import type { Case, CaseFile, LoadedCase, Step, Surface } from "./case-file.js";
import { appendPointer, PointerError, tokensOf } from "./json-pointer.js";
import { checkMatcher, isOperator, isPlainObject } from "./matchers.js";
import { parseStrictJson, StrictJsonError } from "./strict-json.js";
import { namedUuidsIn, stringsIn, templateProblems, uuidTemplate, type UuidForm } from "./templates.js";

export class CaseFileError extends Error {
  override readonly name = "CaseFileError";
}

/** The suite's own cases: `conformance/cases` (from `src/` in tests and from `dist/` when built). */
export const DEFAULT_CASES_DIR = fileURLToPath(new URL("../cases/", import.meta.url));
const SCHEMA_FILE = fileURLToPath(new URL("../cases/case.schema.json", import.meta.url));

let validator: Promise<ValidateFunction> | null = null;

function schemaValidator(): Promise<ValidateFunction> {
  validator ??= readFile(SCHEMA_FILE, "utf8").then((text) =>
    new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(text) as object),
  );
  return validator;
}

/** One line per schema error, most specific first: ajv reports every failing branch of an `anyOf`. */
function schemaMessages(errors: readonly ErrorObject[]): string[] {
  const lines = errors
    .filter((e) => e.keyword !== "anyOf")
    .map((e) => {
      const extra =
        e.keyword === "additionalProperties"
          ? ` \`${(e.params as { additionalProperty: string }).additionalProperty}\``
          : e.keyword === "enum"
            ? `: ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")}`
            : "";
      return `${e.instancePath || "/"}: ${e.message ?? e.keyword}${extra}`;
    });
  return [...new Set(lines)];
}

interface Problem {
  readonly at: string;
  readonly message: string;
}

/** The `{{capture:NAME}}` and `$captured` names a value refers to. */
function capturesUsed(value: unknown): string[] {
  const names: string[] = [];
  for (const text of stringsIn(value)) for (const m of text.matchAll(/\{\{capture:([^{}]*)\}\}/g)) names.push(m[1]!);
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isPlainObject(v)) {
      if (typeof v["$captured"] === "string" && !v["$captured"].startsWith("uuid:")) names.push(v["$captured"]);
      Object.values(v).forEach(walk);
    }
  };
  walk(value);
  return names;
}

function pointerProblem(pointer: string, at: string): Problem[] {
  try {
    tokensOf(pointer);
    return [];
  } catch (e) {
    return [{ at, message: e instanceof PointerError ? e.message : String(e) }];
  }
}

/** `$with` request operators: shape and pointers. */
function withProblems(value: unknown, at: string): Problem[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => withProblems(v, appendPointer(at, i)));
  if (!isPlainObject(value)) return [];
  if (Object.keys(value).length === 1 && Object.hasOwn(value, "$with")) {
    const spec = value["$with"];
    const here = appendPointer(at, "$with");
    if (!isPlainObject(spec) || !Object.hasOwn(spec, "value") || Object.keys(spec).some((k) => !["value", "set", "remove"].includes(k))) {
      return [{ at: here, message: "must be an object {value, set?, remove?}" }];
    }
    const set = spec["set"] ?? {};
    const remove = spec["remove"] ?? [];
    if (!isPlainObject(set)) return [{ at: appendPointer(here, "set"), message: "must map JSON pointers to values" }];
    if (!Array.isArray(remove) || !remove.every((r) => typeof r === "string"))
      return [{ at: appendPointer(here, "remove"), message: "must be a list of JSON pointers" }];
    return [
      ...withProblems(spec["value"], appendPointer(here, "value")),
      ...Object.keys(set).flatMap((p) => pointerProblem(p, appendPointer(appendPointer(here, "set"), p))),
      ...remove.flatMap((p, i) => pointerProblem(p as string, appendPointer(appendPointer(here, "remove"), i))),
    ];
  }
  return Object.entries(value).flatMap(([k, v]) => withProblems(v, appendPointer(at, k)));
}

/** What one case has defined so far: captures of earlier steps, and the form of each named UUID it uses. */
interface CaseState {
  readonly captured: Set<string>;
  readonly uuids: Map<string, UuidForm>;
}

function stepProblems(testCase: Case, step: Step, at: string, state: CaseState): Problem[] {
  const { captured, uuids } = state;
  const problems: Problem[] = [];
  const request = step.request;
  const forms = (["body", "rawBody", "oversizeBody"] as const).filter((f) => request[f] !== undefined);
  if (forms.length > 1) problems.push({ at: `${at}/request`, message: `has ${forms.join(" and ")}: give at most one body` });
  if (request.method === "GET" || request.method === "HEAD") {
    if (forms.length > 0) problems.push({ at: `${at}/request`, message: `a ${request.method} request has no body` });
  }
  for (const [where, value] of [
    ["path", request.path],
    ["headers", request.headers],
    ["body", request.body],
    ["oversizeBody", request.oversizeBody],
  ] as const) {
    for (const text of stringsIn(value)) {
      for (const message of templateProblems(text)) problems.push({ at: `${at}/request/${where}`, message });
      // One name is one UUID: `{{uuid:tx}}` and `{{uuid:tx:1a}}` cannot both be it.
      for (const { name, form } of namedUuidsIn(text)) {
        const first = uuids.get(name);
        if (first === undefined) uuids.set(name, form);
        else if (first !== form)
          problems.push({
            at: `${at}/request/${where}`,
            message: `\`${uuidTemplate(name, form)}\`: the case already uses \`${uuidTemplate(name, first)}\`; one name is one UUID, of one version, variant and case`,
          });
      }
    }
  }
  problems.push(...withProblems(request.body, `${at}/request/body`), ...withProblems(request.oversizeBody, `${at}/request/oversizeBody`));
  const expect = step.expect;
  problems.push(...checkMatcher(expect.body, `${at}/expect/body`).map((m) => ({ at: m.at, message: m.message })));
  for (const [name, m] of Object.entries(expect.headers ?? {}))
    problems.push(...checkMatcher(m, appendPointer(`${at}/expect/headers`, name)));
  for (const [status, m] of Object.entries(expect.counts ?? {})) {
    if (typeof m !== "number" && !isOperator(m))
      problems.push({ at: appendPointer(`${at}/expect/counts`, status), message: "must be a number or a matcher" });
    problems.push(...checkMatcher(m, appendPointer(`${at}/expect/counts`, status)));
  }
  if (expect.counts !== undefined && step.repeat === undefined)
    problems.push({ at: `${at}/expect/counts`, message: "`counts` needs a `repeat`" });
  if (step.repeat?.concurrency !== undefined && step.repeat.concurrency > step.repeat.count) {
    problems.push({ at: `${at}/repeat/concurrency`, message: `is more than the count (${step.repeat.count})` });
  }
  if (expect.signatures !== undefined && !(testCase.requires ?? []).includes("public-key")) {
    problems.push({ at: `${at}/expect/signatures`, message: 'signature checks need the case to declare `"requires": ["public-key"]`' });
  }
  expect.signatures?.forEach((s, i) => problems.push(...pointerProblem(s.at, `${at}/expect/signatures/${i}/at`)));
  for (const name of capturesUsed([request.path, request.headers, request.body, request.oversizeBody, expect])) {
    if (!captured.has(name)) problems.push({ at, message: `uses the capture \`${name}\`, which no earlier step of the case defines` });
  }
  for (const [name, pointer] of Object.entries(step.capture ?? {})) {
    problems.push(...pointerProblem(pointer, appendPointer(`${at}/capture`, name)));
    captured.add(name);
  }
  return problems;
}

function fileProblems(file: CaseFile, surface: Surface, area: string): Problem[] {
  const problems: Problem[] = [];
  if (file.surface !== surface)
    problems.push({ at: "/surface", message: `is \`${file.surface}\`, but the file is under surface-${surface}` });
  if (file.area !== area) problems.push({ at: "/area", message: `is \`${file.area}\`, but the file is ${area}.json` });
  file.cases.forEach((testCase, c) => {
    if (!testCase.id.startsWith(`${surface}.${area}.`))
      problems.push({ at: `/cases/${c}/id`, message: `\`${testCase.id}\` must start with \`${surface}.${area}.\`` });
    const state: CaseState = { captured: new Set(), uuids: new Map() };
    testCase.steps.forEach((step, s) => problems.push(...stepProblems(testCase, step, `/cases/${c}/steps/${s}`, state)));
  });
  return problems;
}

/** Validates one file's text. @throws CaseFileError naming the file and the JSON pointer of the first problems */
export async function parseCaseFile(text: string, file: string, surface: Surface): Promise<CaseFile> {
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (e) {
    throw new CaseFileError(`${file}: not strict JSON: ${e instanceof StrictJsonError ? e.message : String(e)}`);
  }
  const validate = await schemaValidator();
  if (!validate(value)) {
    throw new CaseFileError(`${file}: does not match case.schema.json:\n  ${schemaMessages(validate.errors ?? []).join("\n  ")}`);
  }
  const caseFile = value as unknown as CaseFile;
  const problems = fileProblems(caseFile, surface, basename(file, ".json"));
  if (problems.length > 0) throw new CaseFileError(`${file}: ${problems.map((p) => `${p.at || "/"}: ${p.message}`).join("\n  ")}`);
  return caseFile;
}

/**
 * Every case of `surface`, in file-name order and file order. @throws CaseFileError for a missing directory, a
 * malformed file or an id used twice
 */
export async function loadCases(surface: Surface, casesDir: string = DEFAULT_CASES_DIR): Promise<LoadedCase[]> {
  const dir = join(casesDir, `surface-${surface}`);
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith(".json")).sort();
  } catch (e) {
    throw new CaseFileError(`cannot read the case directory \`${dir}\`: ${(e as Error).message}`);
  }
  if (names.length === 0) throw new CaseFileError(`no case files (*.json) in \`${dir}\``);
  const out: LoadedCase[] = [];
  const seen = new Map<string, string>();
  for (const name of names) {
    const path = join(dir, name);
    const shown = relative(process.cwd(), path) || path;
    const file = await parseCaseFile(await readFile(path, "utf8"), shown, surface);
    for (const testCase of file.cases) {
      const earlier = seen.get(testCase.id);
      if (earlier !== undefined) throw new CaseFileError(`${shown}: case id \`${testCase.id}\` is also used in ${earlier}`);
      seen.set(testCase.id, shown);
      out.push({ ...testCase, file: shown, area: file.area });
    }
  }
  return out;
}
