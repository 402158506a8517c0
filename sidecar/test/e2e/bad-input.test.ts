/**
 * Bad input on every Surface A endpoint that takes a body, against a real listening sidecar: only strict JSON
 * (docs/signing.md: duplicate keys, lone surrogates, unsafe numbers are errors, never silently normalized),
 * only `application/json`, and closed request shapes (spec 2.1, 2.8, 2.9, 4.1). Every answer is a 400 with the
 * exact body: `body must have required property '<name>'` for a missing member (spec 7), otherwise
 * `{error: "Invalid request", details: [{path, message}]}`.
 *
 * The GET endpoints take no body: their path and query input is covered where they are (runtime-info.test.ts for
 * the policy schema path, audit.test.ts for the audit queries), plus the malformed-URL cases at the end here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { AUTH, TRANSFER, answer, evaluate, overrideOf, startE2eSidecar, uid, type E2eSidecar } from "../support/e2e.js";

let s: E2eSidecar;
beforeAll(async () => {
  s = await startE2eSidecar();
});
afterAll(async () => {
  await s.close();
});

const invalid = (path: string, message: string) => ({ status: 400, body: { error: "Invalid request", details: [{ path, message }] } });
const missing = (name: string, at = "body") => ({ status: 400, body: { error: `${at} must have required property '${name}'` } });

/** Each endpoint with a body: a valid body, its required members, and wrong-typed members with their answer. */
interface Endpoint {
  readonly name: string;
  readonly path: string;
  readonly valid: () => Record<string, unknown>;
  readonly required: readonly string[];
  readonly wrongTypes: readonly (readonly [member: string, value: unknown, message: string])[];
  /** A valid body with `text` in a free-text member, so that a bad encoding of it is the body's only problem. */
  readonly withText: (text: string) => Record<string, unknown>;
}

const executedAction = (): Record<string, unknown> => ({
  actionType: "transfer.execute",
  actionId: "bank-1",
  actionTimestamp: new Date().toISOString(),
});

const ENDPOINTS: readonly Endpoint[] = [
  {
    name: "POST /evaluate (variant 1)",
    withText: (text) => ({
      executionId: uid("bad"),
      ...TRANSFER,
      verifiedSignals: TRANSFER_SIGNALS.approved,
      signalProvenance: { amount: text },
    }),
    path: "/evaluate",
    valid: () => ({ executionId: uid("bad"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved }),
    required: ["executionId", "policyId", "policyVersion", "verifiedSignals"],
    wrongTypes: [
      ["executionId", 42, "must be string"],
      ["executionId", "", "must NOT have fewer than 1 characters"],
      ["executionId", "x".repeat(1025), "must NOT have more than 1024 characters"],
      ["policyId", null, "must be string"],
      ["policyVersion", 1.0, "must be string"],
      ["verifiedSignals", [], "must be object"],
      ["verifiedSignals", "amount=250", "must be object"],
      ["signalProvenance", "crm", "must be object"],
    ],
  },
  {
    name: "POST /evaluate (variant 2, dry run)",
    withText: (text) => ({ ...TRANSFER, signals: TRANSFER_SIGNALS.approved, signalProvenance: { amount: text } }),
    path: "/evaluate",
    valid: () => ({ ...TRANSFER, signals: TRANSFER_SIGNALS.approved }),
    // Without `signals` the body is variant 1 (dispatch, docs/sidecar.md): see the dispatch test below.
    required: ["policyId", "policyVersion"],
    wrongTypes: [
      ["policyId", 7, "must be string"],
      ["policyVersion", false, "must be string"],
      ["signals", null, "must be object"],
      ["signals", [1], "must be object"],
    ],
  },
  {
    name: "POST /execute",
    withText: (text) => ({ executionId: uid("bad"), ...TRANSFER, signals: TRANSFER_SIGNALS.approved, signalProvenance: { amount: text } }),
    path: "/execute",
    valid: () => ({ executionId: uid("bad"), ...TRANSFER, signals: TRANSFER_SIGNALS.approved }),
    required: ["executionId", "policyId", "policyVersion", "signals"],
    wrongTypes: [
      ["executionId", ["a"], "must be string"],
      ["policyId", "", "must NOT have fewer than 1 characters"],
      ["signals", "{}", "must be object"],
    ],
  },
  {
    name: "POST /simulate",
    withText: (text) => ({ ...TRANSFER, signals: TRANSFER_SIGNALS.approved, signalProvenance: { amount: text } }),
    path: "/simulate",
    valid: () => ({ ...TRANSFER, signals: TRANSFER_SIGNALS.approved }),
    required: ["policyId", "policyVersion", "signals"],
    wrongTypes: [
      ["policyVersion", { major: 1 }, "must be string"],
      ["signals", true, "must be object"],
    ],
  },
  {
    name: "POST /override",
    withText: (text) => ({ ...overrideOf(uid("bad"), true), reason: text }),
    path: "/override",
    valid: () => overrideOf(uid("bad"), true),
    required: ["executionId", "approved", "approvedBy", "approverRole", "reason"],
    wrongTypes: [
      ["approved", "true", "must be boolean"],
      ["approved", 1, "must be boolean"],
      ["approvedBy", "", "must NOT have fewer than 1 characters"],
      ["approverRole", null, "must be string"],
      ["reason", 3, "must be string"],
    ],
  },
  {
    name: "POST /confirm-execution",
    withText: (text) => ({ attestation: {}, executedAction: { ...executedAction(), actionId: text } }),
    path: "/confirm-execution",
    valid: () => ({ attestation: {}, executedAction: executedAction() }),
    required: ["attestation", "executedAction"],
    wrongTypes: [
      ["attestation", "eyJhbGciOi", "must be object"],
      ["executedAction", [], "must be object"],
      ["timeWindowSeconds", "300", "must be number"],
      ["timeWindowSeconds", 0, "must be > 0"],
      ["timeWindowSeconds", 31_536_001, "must be <= 31536000"],
    ],
  },
];

/** Strict JSON: each input and the parser's exact complaint (the same on every endpoint: one parser for all). */
const NOT_STRICT_JSON: readonly (readonly [name: string, text: string, message: string])[] = [
  ["truncated JSON", "{", "unexpected end of input, expected a string key at line 1 column 2"],
  ["a trailing comma", '{"a":1,}', "trailing comma in object at line 1 column 7"],
  ["single quotes", "{'a':1}", "unexpected character `'`, expected a string key at line 1 column 2"],
  ["text after the value", '{"a":1} x', "unexpected character `x` after the value at line 1 column 9"],
  ["NaN", '{"a":NaN}', "invalid literal `NaN` at line 1 column 6"],
  ["a number that overflows", '{"a":1e400}', "unsafe number `1e400` overflows to infinity at line 1 column 6"],
  [
    "an unsafe integer",
    '{"a":12345678901234567890}',
    "unsafe number `12345678901234567890` exceeds the safe magnitude 2^53 - 1 at line 1 column 6",
  ],
  ["a duplicate key", '{"a":1,"a":2}', "duplicate key `a` at line 1 column 8"],
  ["a duplicate nested key", '{"x":{"b":1,"b":2}}', "duplicate key `b` at line 1 column 13"],
  ["a lone high surrogate", '{"a":"\\ud800"}', "lone surrogate `\\ud800` in string at line 1 column 7"],
  ["surrogates in the wrong order", '{"a":"\\udc00\\ud800"}', "lone surrogate `\\udc00` in string at line 1 column 7"],
  ["a lone surrogate in a key", '{"\\ud800":1}', "lone surrogate `\\ud800` in string at line 1 column 3"],
  ["a byte order mark", '\uFEFF{"a":1}', "byte order mark is not allowed at line 1 column 1"],
  ["an empty body", "", "empty input at line 1 column 1"],
  ["a body of blanks", "   ", "empty input at line 1 column 4"],
];

const NOT_AN_OBJECT = ["null", "[]", '"a string"', "1"] as const;
const NOT_JSON_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "text/json",
  "application/jsonx",
] as const;

function postRaw(path: string, body: string | Uint8Array | undefined, contentType: string | undefined) {
  return s.send("POST", path, {
    headers: { ...AUTH, ...(contentType === undefined ? {} : { "content-type": contentType }) },
    ...(body === undefined ? {} : { body }),
  });
}

// Variant 1 and the dry run share the route: the JSON-level cases are run once per path.
const PATHS = [...new Set(ENDPOINTS.map((e) => e.path)), "/verify"];

describe.each(PATHS)("POST %s: the body is strict JSON", (path) => {
  it.each(NOT_STRICT_JSON)("%s is refused", async (_name, text, message) => {
    expect(answer(await postRaw(path, text, "application/json"))).toEqual(invalid("body", message));
  });

  it.each(NOT_AN_OBJECT)("the JSON value %s is not an object", async (text) => {
    expect(answer(await postRaw(path, text, "application/json"))).toEqual(invalid("body", "must be object"));
  });

  it("no body and no content type is not an object", async () => {
    expect(answer(await postRaw(path, undefined, undefined))).toEqual(invalid("body", "must be object"));
  });

  it("a charset other than UTF-8 is refused, not read as UTF-8", async () => {
    expect(answer(await postRaw(path, "{}", "application/json; charset=utf-16"))).toEqual(
      invalid("headers/content-type", "charset `utf-16` is not supported: send UTF-8"),
    );
  });

  it.each(NOT_JSON_TYPES)("content type %s is refused", async (type) => {
    expect(answer(await postRaw(path, "{}", type))).toEqual(invalid("body", "Unsupported Media Type"));
  });

  it("a JSON body without a content type is refused", async () => {
    expect(answer(await postRaw(path, "{}", undefined))).toEqual(invalid("body", "Unsupported Media Type"));
  });
});

describe.each(ENDPOINTS)("$name: closed request shape", (endpoint) => {
  it("the valid body is accepted (the cases below each break one thing)", async () => {
    const r = await s.call("POST", endpoint.path, endpoint.valid());
    expect(r.status).not.toBe(400);
    expect(r.status).toBeLessThan(500);
  });

  it.each(endpoint.required)("without `%s` names it", async (member) => {
    const { [member]: _omitted, ...body } = endpoint.valid();
    expect(answer(await s.call("POST", endpoint.path, body))).toEqual(missing(member));
  });

  it.each(endpoint.wrongTypes)("`%s` = %j: %s", async (member, value, message) => {
    expect(answer(await s.call("POST", endpoint.path, { ...endpoint.valid(), [member]: value }))).toEqual(
      invalid(`body/${member}`, message),
    );
  });

  // Bytes that are not UTF-8 (a lone surrogate encoded as UTF-8, ED A0 80, or a stray FF) must not be decoded to
  // U+FFFD and accepted: that would sign a rewrite of what was sent and get past the lone-surrogate rule.
  it.each([
    ["a lone surrogate encoded as UTF-8 bytes", [0xed, 0xa0, 0x80]],
    ["a byte that is never UTF-8", [0xff]],
  ])("%s (invalid UTF-8) is refused", async (_name, bytes) => {
    const [before, after] = JSON.stringify(endpoint.withText("PLACEHOLDER")).split("PLACEHOLDER");
    const body = Buffer.concat([Buffer.from(before ?? ""), Buffer.from(bytes), Buffer.from(after ?? "")]);
    const r = await postRaw(endpoint.path, body, "application/json");
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: "Invalid request", details: [{ path: "body", message: "body is not valid UTF-8" }] });
  });

  it("an unknown member is refused, not dropped", async () => {
    expect(answer(await s.call("POST", endpoint.path, { ...endpoint.valid(), approvedAt: "2026-01-01T00:00:00Z" }))).toEqual(
      invalid("body", "must NOT have additional property 'approvedAt'"),
    );
  });
});

describe("POST /evaluate: dispatch (docs/sidecar.md)", () => {
  it("both verifiedSignals and signals is a 400", async () => {
    const body = { executionId: uid("both"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved, signals: TRANSFER_SIGNALS.approved };
    expect(answer(await s.call("POST", "/evaluate", body))).toEqual(
      invalid("body", "must have either `verifiedSignals` (evaluate) or `signals` (dry run), not both"),
    );
  });

  it("neither is variant 1 with its first missing member", async () => {
    expect(answer(await s.call("POST", "/evaluate", { ...TRANSFER }))).toEqual(missing("executionId"));
    expect(answer(await s.call("POST", "/evaluate", { executionId: uid("neither"), ...TRANSFER }))).toEqual(missing("verifiedSignals"));
  });

  it("`executionId` is not a member of the dry run", async () => {
    expect(answer(await s.call("POST", "/evaluate", { executionId: uid("dry"), ...TRANSFER, signals: TRANSFER_SIGNALS.approved }))).toEqual(
      invalid("body", "must NOT have additional property 'executionId'"),
    );
  });
});

describe("POST /confirm-execution: the executed action", () => {
  const body = (action: Record<string, unknown>) => ({ attestation: {}, executedAction: action });

  it.each(["actionType", "actionId", "actionTimestamp"])("without `executedAction.%s` names it", async (member) => {
    const { [member]: _omitted, ...action } = executedAction();
    expect(answer(await s.call("POST", "/confirm-execution", body(action)))).toEqual(missing(member, "body/executedAction"));
  });

  it.each(["yesterday", "2026-01-01", "2026-01-01T00:00:00", "2026-13-01T00:00:00Z"])(
    "actionTimestamp %j is not an ISO 8601 instant",
    async (stamp) => {
      expect(answer(await s.call("POST", "/confirm-execution", body({ ...executedAction(), actionTimestamp: stamp })))).toEqual(
        invalid("body/executedAction/actionTimestamp", "must be an ISO 8601 date-time with a time zone, e.g. 2026-11-22T10:00:00Z"),
      );
    },
  );

  it("actionDetails must be an object, and the action is closed", async () => {
    expect(answer(await s.call("POST", "/confirm-execution", body({ ...executedAction(), actionDetails: [] })))).toEqual(
      invalid("body/executedAction/actionDetails", "must be object"),
    );
    expect(answer(await s.call("POST", "/confirm-execution", body({ ...executedAction(), executedBy: "bot" })))).toEqual(
      invalid("body/executedAction", "must NOT have additional property 'executedBy'"),
    );
  });
});

describe("POST /verify: any object is judged, not refused", () => {
  const FAILED = { valid: false, checks: { signature: "failed", runtime: "failed", schema: "failed" } };

  it("an attestation with a member missing, an unknown member or a wrong-typed member is not valid (200)", async () => {
    const { attestation } = (await evaluate(s, TRANSFER_SIGNALS.approved)).body;
    const { signature: _omitted, ...unsigned } = attestation;
    expect(answer(await s.call("POST", "/verify", unsigned))).toEqual({ status: 200, body: FAILED });
    const extra = await s.call<{ valid: boolean }>("POST", "/verify", { ...attestation, approvedAt: "2026-01-01T00:00:00Z" });
    expect(extra.status).toBe(200);
    expect(extra.body.valid).toBe(false);
    const wrongType = await s.call<{ valid: boolean }>("POST", "/verify", { ...attestation, policyVersion: 1 });
    expect(wrongType.status).toBe(200);
    expect(wrongType.body.valid).toBe(false);
    expect(answer(await s.call("POST", "/verify", {}))).toEqual({ status: 200, body: FAILED });
  });
});

describe("malformed URLs", () => {
  it("a path with bad percent-encoding is a 400 (with the key)", async () => {
    expect((await s.call("GET", "/audit/decisions/%ZZ")).status).toBe(400);
  });

  it("the 400 of a bad URL has the error table's body", async () => {
    const r = await s.call("GET", "/audit/decisions/%ZZ");
    expect(r.body).toEqual({ error: "Invalid request", details: [{ path: "url", message: expect.any(String) }] });
  });
});
