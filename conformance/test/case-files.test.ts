/**
 * The shipped case files: every one loads (strict JSON, case.schema.json, the loader's own checks), ids are unique
 * across both surfaces, and the Surface A files cover what the issue asks for: every endpoint of spec 4.1 and every
 * status of its error table that a correctly configured server can show, every row of spec section 3. Surface B's
 * files must name each of its 13 routes. And a malformed file is an error naming the file and the JSON pointer.
 */
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoadedCase, RequestSpec, Step } from "../src/case-file.js";
import { CaseFileError, loadCases } from "../src/load-cases.js";

let a: LoadedCase[];
let b: LoadedCase[];
beforeAll(async () => {
  [a, b] = await Promise.all([loadCases("a"), loadCases("b")]);
});

const steps = (cases: readonly LoadedCase[]): { testCase: LoadedCase; step: Step }[] =>
  cases.flatMap((testCase) => testCase.steps.map((step) => ({ testCase, step })));
const bodyOf = (r: RequestSpec): unknown => r.body ?? r.oversizeBody?.body;
const has = (r: RequestSpec, member: string): boolean =>
  typeof bodyOf(r) === "object" && bodyOf(r) !== null && Object.hasOwn(bodyOf(r) as object, member);
const statuses = (step: Step): number[] => {
  const s = step.expect.status;
  return s === undefined ? [] : typeof s === "number" ? [s] : [...s];
};

describe("every shipped case file", () => {
  it("loads: both surfaces have cases", () => {
    expect(a.length).toBeGreaterThan(100);
    expect(b.length).toBeGreaterThan(0);
  });

  it("has ids unique across both surfaces", () => {
    const ids = [...a, ...b].map((c) => c.id);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it("names a spec section the spec has", () => {
    const known = /^(1(\.[1-9][0-9]?)?|2(\.(1[0-3]|[1-9]))?|3|4(\.[12])?|5(\.[1-7])?|6|7|8|9)$/;
    expect([...a, ...b].filter((c) => !known.test(c.section)).map((c) => `${c.id}: ${c.section}`)).toEqual([]);
  });

  it("puts only budget-spending cases last: Surface A's rate limit", () => {
    expect(a.filter((c) => c.runLast === true).map((c) => c.id)).toEqual(["a.limits.rate-limit"]);
  });
});

describe("Surface A covers spec 4.1", () => {
  const ENDPOINTS: readonly (readonly [string, (r: RequestSpec) => boolean])[] = [
    ["POST /evaluate (variant 1)", (r) => r.method === "POST" && r.path === "/evaluate" && has(r, "verifiedSignals")],
    ["POST /evaluate (variant 2)", (r) => r.method === "POST" && r.path === "/evaluate" && has(r, "signals")],
    ["POST /execute", (r) => r.method === "POST" && r.path === "/execute"],
    ["POST /verify", (r) => r.method === "POST" && r.path === "/verify"],
    ["POST /simulate", (r) => r.method === "POST" && r.path === "/simulate"],
    ["POST /override", (r) => r.method === "POST" && r.path === "/override"],
    ["POST /confirm-execution", (r) => r.method === "POST" && r.path === "/confirm-execution"],
    [
      "GET /policies/{policyId}/versions/{version}/schema",
      (r) => r.method === "GET" && /^\/policies\/[^/]+\/versions\/[^/]+\/schema$/.test(r.path),
    ],
    ["GET /health", (r) => r.method === "GET" && r.path === "/health"],
    ["GET /runtime/manifest", (r) => r.method === "GET" && r.path === "/runtime/manifest"],
    ["GET /runtime/capabilities", (r) => r.method === "GET" && r.path === "/runtime/capabilities"],
    ["GET /audit/decisions", (r) => r.method === "GET" && /^\/audit\/decisions(\?|$)/.test(r.path)],
    ["GET /audit/decisions/:executionId", (r) => r.method === "GET" && /^\/audit\/decisions\/[^?]+$/.test(r.path)],
    ["GET /audit/stats", (r) => r.method === "GET" && r.path === "/audit/stats"],
    ["GET /audit/security", (r) => r.method === "GET" && /^\/audit\/security(\?|$)/.test(r.path)],
  ];

  it.each(ENDPOINTS)("%s is requested and answers 200 in some case", (_name, isEndpoint) => {
    expect(steps(a).some(({ step }) => isEndpoint(step.request) && statuses(step).includes(200))).toBe(true);
  });

  it.each(ENDPOINTS.filter(([name]) => name !== "GET /health"))("%s without a key is expected to be 401", (_name, isEndpoint) => {
    expect(steps(a).some(({ step }) => isEndpoint(step.request) && step.request.auth === "none" && statuses(step).includes(401))).toBe(
      true,
    );
  });

  // The per-endpoint error statuses of spec 4.1, without 500 and 503: a correctly configured server cannot show them
  // (docs/conformance.md, "Not observable from outside").
  const ERRORS: readonly (readonly [string, number])[] = [
    ["POST /evaluate (variant 1)", 400],
    ["POST /evaluate (variant 1)", 404],
    ["POST /evaluate (variant 1)", 422],
    ["POST /evaluate (variant 2)", 400],
    ["POST /evaluate (variant 2)", 422],
    ["POST /execute", 400],
    ["POST /execute", 413],
    ["POST /execute", 422],
    ["POST /execute", 429],
    ["POST /verify", 400],
    ["POST /simulate", 400],
    ["POST /simulate", 422],
    ["POST /override", 400],
    ["POST /override", 404],
    ["POST /override", 409],
  ];

  it.each(ERRORS)("%s: %i is expected in some case", (name, status) => {
    const isEndpoint = ENDPOINTS.find(([n]) => n === name)![1];
    expect(steps(a).some(({ step }) => isEndpoint(step.request) && statuses(step).includes(status))).toBe(true);
  });

  it("the spec 7 messages and codes appear in the expectations", () => {
    const text = JSON.stringify(a.map((c) => c.steps.map((s) => s.expect)));
    for (const needle of [
      "body must have required property",
      '"Invalid request"',
      '"Unauthorized"',
      '"Policy not found"',
      '"Pending override not found"',
      '"Override already resolved"',
      '"Request body too large"',
      "Signal validation failed",
      "Signals? validation failed",
      "INV-013@replay",
      "SYS-006@",
      '"Rate limit exceeded"',
      "INTEGRITY_ALREADY_CONFIRMED",
      "INTEGRITY_INVALID_ATTESTATION",
      ...["003", "004", "006", "007", "008", "009", "010", "011", "012"].map((n) => `"VAL-${n}"`),
    ]) {
      expect(text, needle).toContain(needle);
    }
  });

  it("every row of spec section 3 (Surface A's) has a case", () => {
    const ids = new Set(a.map((c) => c.id));
    for (const id of [
      "a.evaluate.approved",
      "a.evaluate.pending-override",
      "a.evaluate.rejected",
      "a.override.approve",
      "a.override.reject",
      "a.override.approved-twice",
      "a.override.none-pending",
      "a.confirm-execution.matched",
      "a.confirm-execution.other-action-type",
      "a.confirm-execution.other-amount",
      "a.confirm-execution.already-confirmed",
      "a.confirm-execution.tampered-attestation",
    ]) {
      expect(ids.has(id), id).toBe(true);
      expect(a.find((c) => c.id === id)!.section).toBe("3");
    }
  });

  it("signatures are checked in the public-key cases: v1 and v2 attestations and the execution proof", () => {
    const checks = steps(a).flatMap(({ testCase, step }) =>
      (step.expect.signatures ?? []).map((s) => ({ testCase, request: step.request, check: s })),
    );
    expect(checks.every(({ testCase }) => testCase.requires?.includes("public-key"))).toBe(true);
    expect(
      checks.some(({ request, check }) => request.path === "/evaluate" && check.payloadType === "application/vnd.writ.attestation.v1+json"),
    ).toBe(true);
    expect(
      checks.some(({ request, check }) => request.path === "/execute" && check.payloadType === "application/vnd.writ.attestation.v1+json"),
    ).toBe(true);
    expect(
      checks.some(({ check }) => check.from === "jcs-string" && check.payloadType === "application/vnd.writ.execution-proof.v1+json"),
    ).toBe(true);
  });
});

describe("Surface B covers spec 4.2", () => {
  const ROUTES: readonly (readonly [string, string, RegExp])[] = [
    ["GET", "/health", /^\/health$/],
    ["GET", "/version", /^\/version$/],
    ["POST", "/execute", /^\/execute$/],
    ["GET", "/transactions", /^\/transactions(\?.*)?$/],
    ["GET", "/transactions/:id", /^\/transactions\/[^/?]+$/],
    ["POST", "/transactions", /^\/transactions$/],
    ["POST", "/verify", /^\/verify$/],
    ["GET", "/verification/:id", /^\/verification\/[^/?]+$/],
    ["POST", "/receipt", /^\/receipt$/],
    ["GET", "/receipt/latest/:id", /^\/receipt\/latest\/[^/?]+$/],
    ["POST", "/replay", /^\/replay$/],
    ["GET", "/trust-records/:id", /^\/trust-records\/[^/?]+$/],
    ["POST", "/policies/validate", /^\/policies\/validate$/],
  ];

  it.each(ROUTES)("%s %s is requested in some case", (method, _path, pattern) => {
    expect(steps(b).some(({ step }) => step.request.method === method && pattern.test(step.request.path))).toBe(true);
  });

  it("some case probes a route that must not exist", () => {
    const isRoute = (r: RequestSpec) => ROUTES.some(([method, , pattern]) => r.method === method && pattern.test(r.path));
    expect(steps(b).some(({ step }) => !isRoute(step.request) && statuses(step).every((s) => s === 404 || s === 405))).toBe(true);
  });
});

describe("a malformed case file is an error naming the file and the JSON pointer", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-conformance-cases-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const GOOD_STEP = { request: { method: "GET", path: "/health", auth: "none" }, expect: { status: 200 } };
  const fileOf = (cases: unknown[], extra: Record<string, unknown> = {}) => ({ surface: "a", area: "bad", title: "t", cases, ...extra });
  const caseOf = (extra: Record<string, unknown> = {}) => ({ id: "a.bad.one", section: "3", title: "t", steps: [GOOD_STEP], ...extra });

  async function loadError(files: Record<string, string | object>): Promise<string> {
    const root = await mkdtemp(join(dir, "case-"));
    await mkdir(join(root, "surface-a"));
    for (const [name, content] of Object.entries(files)) {
      await writeFile(join(root, "surface-a", name), typeof content === "string" ? content : JSON.stringify(content));
    }
    try {
      await loadCases("a", root);
    } catch (e) {
      expect(e).toBeInstanceOf(CaseFileError);
      return (e as Error).message.replace(root, "ROOT").replaceAll(/\S*surface-a\//g, "");
    }
    throw new Error("the files loaded");
  }

  it("a well-formed file loads", async () => {
    const root = await mkdtemp(join(dir, "case-"));
    await mkdir(join(root, "surface-a"));
    await writeFile(join(root, "surface-a", "bad.json"), JSON.stringify(fileOf([caseOf()])));
    expect((await loadCases("a", root)).map((c) => c.id)).toEqual(["a.bad.one"]);
  });

  it("the new template and matcher forms load: UUIDs of a version and variant, $not, $isoTime withinSeconds", async () => {
    const root = await mkdtemp(join(dir, "case-"));
    await mkdir(join(root, "surface-a"));
    const steps = [
      {
        request: { method: "POST", path: "/execute", body: { id: "{{uuid:tx:5b:upper}}", other: "{{uuid:o:18}}" } },
        expect: {
          status: 200,
          body: { id: { $captured: "uuid:tx" }, at: { $isoTime: { withinSeconds: 120 }, $not: "2001-01-01T00:00:00Z" } },
        },
        capture: { first: "/id" },
      },
      {
        request: { method: "GET", path: "/transactions/{{uuid:tx:5b:upper}}" },
        expect: { status: 200, body: { id: { $type: "string", $not: { $captured: "first" } } } },
      },
    ];
    await writeFile(
      join(root, "surface-a", "bad.json"),
      JSON.stringify(
        fileOf([
          caseOf({ steps }),
          caseOf({ id: "a.bad.two", steps: [{ request: { method: "GET", path: "/t/{{uuid:tx}}" }, expect: { status: 200 } }] }),
        ]),
      ),
    );
    expect((await loadCases("a", root)).map((c) => c.id)).toEqual(["a.bad.one", "a.bad.two"]);
  });

  it.each([
    ["not strict JSON", '{"surface":"a","surface":"a"}', "bad.json: not strict JSON: duplicate key `surface` at line 1 column 16"],
    [
      "a member missing",
      fileOf([{ id: "a.bad.one", title: "t", steps: [GOOD_STEP] }]),
      "bad.json: does not match case.schema.json:\n  /cases/0: must have required property 'section'",
    ],
    [
      "an unknown member",
      fileOf([caseOf({ require: ["public-key"] })]),
      "bad.json: does not match case.schema.json:\n  /cases/0: must NOT have additional properties `require`",
    ],
    [
      "a status of the wrong type",
      fileOf([caseOf({ steps: [{ ...GOOD_STEP, expect: { status: "200" } }] })]),
      "bad.json: does not match case.schema.json:\n  /cases/0/steps/0/expect/status: must be integer\n  /cases/0/steps/0/expect/status: must be array",
    ],
    [
      "an unknown auth variant",
      fileOf([caseOf({ steps: [{ ...GOOD_STEP, request: { method: "GET", path: "/health", auth: "basic" } }] })]),
      'bad.json: does not match case.schema.json:\n  /cases/0/steps/0/request/auth: must be equal to one of the allowed values: "valid", "none", "wrong-key", "not-bearer", "empty-bearer"',
    ],
    ["an id of another file", fileOf([caseOf({ id: "a.other.one" })]), "bad.json: /cases/0/id: `a.other.one` must start with `a.bad.`"],
    ["the wrong area", fileOf([caseOf()], { area: "good" }), "bad.json: /area: is `good`, but the file is bad.json"],
    [
      "an unknown operator",
      fileOf([caseOf({ steps: [{ ...GOOD_STEP, expect: { status: 200, body: { status: { $regx: "ok" } } } }] })]),
      "bad.json: /cases/0/steps/0/expect/body/status/$regx: is not an operator; known: $type, $regex, $absent, $exact, $oneOf, $each, $length, $minLength, $maxLength, $gte, $lte, $captured, $isoTime, $json, $not",
    ],
    [
      "an unknown template",
      fileOf([caseOf({ steps: [{ ...GOOD_STEP, request: { method: "GET", path: "/audit/decisions/{{uid:e}}" } }] })]),
      "bad.json: /cases/0/steps/0/request/path: `{{uid:e}}` is not a template",
    ],
    [
      "a UUID of version 6",
      fileOf([
        caseOf({ steps: [{ request: { method: "POST", path: "/execute", body: { id: "{{uuid:tx:6a}}" } }, expect: { status: 200 } }] }),
      ]),
      "bad.json: /cases/0/steps/0/request/body: `{{uuid:tx:6a}}`: the version digit must be 1 to 5, not `6`; a UUID of a chosen version and variant is `{{uuid:NAME:VX}}` or `{{uuid:NAME:VX:upper}}`, V the version digit 1 to 5, X the variant digit 8, 9, a or b (e.g. `{{uuid:tx:1a}}`)",
    ],
    [
      "a UUID of version 0",
      fileOf([caseOf({ steps: [{ request: { method: "GET", path: "/transactions/{{uuid:tx:0a}}" }, expect: { status: 200 } }] })]),
      "bad.json: /cases/0/steps/0/request/path: `{{uuid:tx:0a}}`: the version digit must be 1 to 5, not `0`; a UUID of a chosen version and variant is `{{uuid:NAME:VX}}` or `{{uuid:NAME:VX:upper}}`, V the version digit 1 to 5, X the variant digit 8, 9, a or b (e.g. `{{uuid:tx:1a}}`)",
    ],
    [
      "a UUID of variant c",
      fileOf([
        caseOf({
          steps: [{ request: { method: "GET", path: "/health", headers: { "x-id": "{{uuid:tx:4c:upper}}" } }, expect: { status: 200 } }],
        }),
      ]),
      "bad.json: /cases/0/steps/0/request/headers: `{{uuid:tx:4c:upper}}`: the variant digit must be 8, 9, a or b (lower case), not `c`; a UUID of a chosen version and variant is `{{uuid:NAME:VX}}` or `{{uuid:NAME:VX:upper}}`, V the version digit 1 to 5, X the variant digit 8, 9, a or b (e.g. `{{uuid:tx:1a}}`)",
    ],
    [
      "one UUID name in two forms in one case",
      fileOf([
        caseOf({
          steps: [
            { request: { method: "POST", path: "/execute", body: { id: "{{uuid:tx:1a}}" } }, expect: { status: 200 } },
            { request: { method: "GET", path: "/transactions/{{uuid:tx}}" }, expect: { status: 200 } },
          ],
        }),
      ]),
      "bad.json: /cases/0/steps/1/request/path: `{{uuid:tx}}`: the case already uses `{{uuid:tx:1a}}`; one name is one UUID, of one version, variant and case",
    ],
    [
      "a generated UUID named with its form in $captured",
      fileOf([
        caseOf({
          steps: [
            {
              request: { method: "POST", path: "/execute", body: { id: "{{uuid:tx:1a}}" } },
              expect: { status: 200, body: { id: { $captured: "uuid:tx:1a" } } },
            },
          ],
        }),
      ]),
      "bad.json: /cases/0/steps/0/expect/body/id/$captured: `uuid:tx:1a`: a generated UUID is named `uuid:NAME`, without a version, variant or case suffix",
    ],
    [
      "a bad withinSeconds",
      fileOf([caseOf({ steps: [{ ...GOOD_STEP, expect: { status: 200, body: { at: { $isoTime: { withinSeconds: -5 } } } } }] })]),
      'bad.json: /cases/0/steps/0/expect/body/at/$isoTime: must be true, false or {"withinSeconds": N} with a number N >= 0',
    ],
    [
      "an unknown operator inside $not",
      fileOf([caseOf({ steps: [{ ...GOOD_STEP, expect: { status: 200, headers: { etag: { $not: { $regx: "x" } } } } }] })]),
      "bad.json: /cases/0/steps/0/expect/headers/etag/$not/$regx: is not an operator; known: $type, $regex, $absent, $exact, $oneOf, $each, $length, $minLength, $maxLength, $gte, $lte, $captured, $isoTime, $json, $not",
    ],
    [
      "a capture used before it is made",
      fileOf([caseOf({ steps: [{ request: { method: "POST", path: "/verify", body: "{{capture:att}}" }, expect: { status: 200 } }] })]),
      "bad.json: /cases/0/steps/0: uses the capture `att`, which no earlier step of the case defines",
    ],
    [
      "a signature check without the key requirement",
      fileOf([caseOf({ steps: [{ ...GOOD_STEP, expect: { status: 200, signatures: [{ at: "/attestation", payloadType: "x" }] } }] })]),
      'bad.json: /cases/0/steps/0/expect/signatures: signature checks need the case to declare `"requires": ["public-key"]`',
    ],
    [
      "two bodies",
      fileOf([caseOf({ steps: [{ request: { method: "POST", path: "/verify", body: {}, rawBody: "{}" }, expect: { status: 200 } }] })]),
      "bad.json: /cases/0/steps/0/request: has body and rawBody: give at most one body",
    ],
    [
      "counts without repeat",
      fileOf([caseOf({ steps: [{ ...GOOD_STEP, expect: { counts: { "200": 1 } } }] })]),
      "bad.json: /cases/0/steps/0/expect/counts: `counts` needs a `repeat`",
    ],
    [
      "a bad $with pointer",
      fileOf([
        caseOf({
          steps: [
            {
              request: { method: "POST", path: "/verify", body: { $with: { value: {}, remove: ["signature"] } } },
              expect: { status: 200 },
            },
          ],
        }),
      ]),
      "bad.json: /cases/0/steps/0/request/body/$with/remove/0: `signature` is not a JSON pointer: it must be empty or start with `/`",
    ],
  ])("%s", async (_name, content, message) => {
    expect(await loadError({ "bad.json": content as string | object })).toBe(message);
  });

  it("an id used in two files", async () => {
    const other = { surface: "a", area: "other", title: "t", cases: [caseOf({ id: "a.other.one" })] };
    const first = fileOf([caseOf(), caseOf({ id: "a.bad.two" })]);
    const dup = { ...other, cases: [caseOf({ id: "a.other.one" }), caseOf({ id: "a.other.one" })] };
    expect(await loadError({ "bad.json": first, "other.json": dup })).toBe("other.json: case id `a.other.one` is also used in other.json");
  });

  it("a surface directory without case files", async () => {
    expect(await loadError({})).toMatch(/^no case files \(\*\.json\) in `/);
  });
});
