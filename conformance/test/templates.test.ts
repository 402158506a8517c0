/** Templates, the `$with` operator, JSON pointers, and how a step's request is built (auth variants, sized bodies). */
import { describe, expect, it } from "vitest";
import { authorizationFor, buildRequest, paddedJson, wrongKeyFor } from "../src/build-request.js";
import { resolvePointer, tokensOf, withChanges } from "../src/json-pointer.js";
import {
  CaseScope,
  namedUuidsIn,
  resolveString,
  resolveValue,
  templateProblems,
  TemplateError,
  unknownTemplates,
} from "../src/templates.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const fixedClock = () => new Date("2026-01-01T00:00:00.000Z");

describe("templates", () => {
  it("{{uuid:NAME}} is one fresh UUID per case and name; {{uuid}} is fresh at every use", () => {
    const scope = new CaseScope();
    const first = resolveString("{{uuid:e}}", scope);
    expect(first).toMatch(UUID);
    expect(resolveString("/audit/decisions/{{uuid:e}}", scope)).toBe(`/audit/decisions/${first}`);
    expect(resolveString("{{uuid:other}}", scope)).not.toBe(first);
    expect(resolveString("{{uuid:e}}", new CaseScope())).not.toBe(first);
    const fresh = [resolveString("{{uuid}}", scope), resolveString("{{uuid}}", scope)];
    expect(fresh[0]).toMatch(UUID);
    expect(fresh[0]).not.toBe(fresh[1]);
  });

  it("{{uuid:NAME:VX}} is a fresh UUID of version V and variant X, the same per case and name", () => {
    for (const version of ["1", "2", "3", "4", "5"]) {
      for (const variant of ["8", "9", "a", "b"]) {
        const scope = new CaseScope();
        const value = resolveString(`{{uuid:tx:${version}${variant}}}`, scope);
        expect(value).toMatch(new RegExp(`^[0-9a-f]{8}-[0-9a-f]{4}-${version}[0-9a-f]{3}-${variant}[0-9a-f]{3}-[0-9a-f]{12}$`));
        expect(resolveString(`/transactions/{{uuid:tx:${version}${variant}}}`, scope)).toBe(`/transactions/${value}`);
        expect(resolveValue({ id: `{{uuid:tx:${version}${variant}}}` }, scope)).toEqual({ id: value });
        // `$captured: "uuid:tx"` sees the value as it was sent.
        expect(scope.lookup("uuid:tx")).toEqual({ found: true, value });
      }
    }
    // The other 120 bits are random: fresh per case and per name.
    const scope = new CaseScope();
    const one = resolveString("{{uuid:a:1a}}", scope);
    expect(resolveString("{{uuid:b:1a}}", scope)).not.toBe(one);
    expect(resolveString("{{uuid:a:1a}}", new CaseScope())).not.toBe(one);
    const many = new Set(Array.from({ length: 50 }, () => resolveString("{{uuid:x:3b}}", new CaseScope())));
    expect(many.size).toBe(50);
    expect(new Set([...many].map((u) => u.replaceAll("-", "").slice(0, 12))).size).toBeGreaterThan(1);
  });

  it("{{uuid:NAME:VX:upper}} spells it in upper case, and $captured names it uuid:NAME in that spelling", () => {
    const scope = new CaseScope();
    const value = resolveString("{{uuid:tx:5b:upper}}", scope);
    expect(value).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-5[0-9A-F]{3}-B[0-9A-F]{3}-[0-9A-F]{12}$/);
    expect(value).not.toMatch(/[a-f]/);
    expect(resolveValue({ businessTransactionId: "{{uuid:tx:5b:upper}}", metadata: { id: "{{uuid:tx:5b:upper}}" } }, scope)).toEqual({
      businessTransactionId: value,
      metadata: { id: value },
    });
    expect(scope.lookup("uuid:tx")).toEqual({ found: true, value });
    expect(resolveString("{{uuid:low:4a}}", scope)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("one name is one UUID: the same name in another form in one case is an error", () => {
    const scope = new CaseScope();
    resolveString("{{uuid:tx:1a}}", scope);
    expect(() => resolveString("{{uuid:tx}}", scope)).toThrow(
      new TemplateError("`{{uuid:tx}}`: this case already made the UUID `tx` as `{{uuid:tx:1a}}`; one name is one UUID, of one form"),
    );
    expect(() => resolveString("{{uuid:tx:1a:upper}}", scope)).toThrow(TemplateError);
    expect(() => resolveString("{{uuid:tx:2a}}", scope)).toThrow(TemplateError);
    const plain = new CaseScope();
    resolveString("{{uuid:tx}}", plain);
    expect(() => resolveValue({ id: "{{uuid:tx:4a}}" }, plain)).toThrow(/already made the UUID `tx` as `\{\{uuid:tx\}\}`/);
    expect(namedUuidsIn("{{uuid:a}} {{uuid:b:1a}} {{uuid:c:5b:upper}} {{uuid}} {{uuid:d:6a}} {{now}}")).toEqual([
      { name: "a", form: "" },
      { name: "b", form: "1a" },
      { name: "c", form: "5b:upper" },
    ]);
  });

  it("a UUID of a version, variant or spelling that does not exist is refused, saying which digit is wrong", () => {
    expect(unknownTemplates("{{uuid:tx:1a}} {{uuid:tx:58}} {{uuid:tx:29:upper}} {{uuid:tx:4b}}")).toEqual([]);
    expect(
      unknownTemplates(
        "{{uuid:tx:0a}} {{uuid:tx:6a}} {{uuid:tx:4c}} {{uuid:tx:47}} {{uuid:tx:4A}} {{uuid:tx:4a:lower}} {{uuid:tx:}} {{uuid:tx:4}} {{uuid:tx:4ab}}",
      ),
    ).toEqual([
      "uuid:tx:0a",
      "uuid:tx:6a",
      "uuid:tx:4c",
      "uuid:tx:47",
      "uuid:tx:4A",
      "uuid:tx:4a:lower",
      "uuid:tx:",
      "uuid:tx:4",
      "uuid:tx:4ab",
    ]);
    const how =
      "a UUID of a chosen version and variant is `{{uuid:NAME:VX}}` or `{{uuid:NAME:VX:upper}}`, V the version digit 1 to 5, X the variant digit 8, 9, a or b (e.g. `{{uuid:tx:1a}}`)";
    expect(templateProblems("{{uuid:tx:0a}} {{uuid:tx:6a}} {{uuid:tx:4c}} {{uuid:tx:4a:lower}} {{uuid:tx:4}} {{uid:tx}}")).toEqual([
      `\`{{uuid:tx:0a}}\`: the version digit must be 1 to 5, not \`0\`; ${how}`,
      `\`{{uuid:tx:6a}}\`: the version digit must be 1 to 5, not \`6\`; ${how}`,
      `\`{{uuid:tx:4c}}\`: the variant digit must be 8, 9, a or b (lower case), not \`c\`; ${how}`,
      `\`{{uuid:tx:4a:lower}}\`: \`lower\` is not a spelling; only \`upper\` is; ${how}`,
      `\`{{uuid:tx:4}}\`: the suffix must be two digits, the version and the variant; ${how}`,
      "`{{uid:tx}}` is not a template",
    ]);
    expect(templateProblems("{{uuid:tx:1a}} {{uuid:tx:5b:upper}}")).toEqual([]);
    expect(() => resolveString("{{uuid:tx:6a}}", new CaseScope())).toThrow(TemplateError);
    expect(() => resolveString("{{uuid:tx:4c}}", new CaseScope())).toThrow(/the variant digit must be 8, 9, a or b/);
  });

  it("{{now}}, {{now+N}}, {{now-N}} are ISO 8601 instants shifted by N seconds", () => {
    const scope = new CaseScope(fixedClock);
    expect(resolveString("{{now}}", scope)).toBe("2026-01-01T00:00:00.000Z");
    expect(resolveString("{{now+90}}", scope)).toBe("2026-01-01T00:01:30.000Z");
    expect(resolveString("from={{now-3600}}&to={{now}}", scope)).toBe("from=2025-12-31T23:00:00.000Z&to=2026-01-01T00:00:00.000Z");
  });

  it("{{capture:NAME}} alone becomes the captured JSON value; inside a string, its text", () => {
    const scope = new CaseScope();
    scope.capture("att", { a: 1, nested: { b: [true] } });
    scope.capture("id", "x/y");
    expect(resolveValue({ attestation: "{{capture:att}}", note: "id {{capture:id}}", n: 5 }, scope)).toEqual({
      attestation: { a: 1, nested: { b: [true] } },
      note: "id x/y",
      n: 5,
    });
    expect(resolveString("/audit/decisions/{{capture:id}}", scope, "path")).toBe("/audit/decisions/x%2Fy");
  });

  it("a capture no earlier step made is an error", () => {
    expect(() => resolveValue("{{capture:nothing}}", new CaseScope())).toThrow(TemplateError);
    expect(() => resolveString("a {{capture:nothing}}", new CaseScope())).toThrow(/nothing was captured/);
  });

  it("unknownTemplates names what is not a template", () => {
    expect(unknownTemplates("{{uuid}} {{uuid:a}} {{capture:b}} {{now}} {{now+5}} {{now-5}}")).toEqual([]);
    expect(unknownTemplates("{{uuidd}} {{today}} {{now*2}}")).toEqual(["uuidd", "today", "now*2"]);
  });

  it("$with copies a captured value with members set and removed, leaving the capture unchanged", () => {
    const scope = new CaseScope();
    const att = { decision: { outcome: { reason: "ok" } }, signature: "sig", list: [1, 2] };
    scope.capture("att", att);
    scope.capture("other", "OTHER");
    const tampered = resolveValue(
      {
        $with: {
          value: "{{capture:att}}",
          set: { "/decision/outcome/reason": "forged", "/signature": "{{capture:other}}", "/list/1": 9 },
          remove: ["/list/0"],
        },
      },
      scope,
    );
    expect(tampered).toEqual({ decision: { outcome: { reason: "forged" } }, signature: "OTHER", list: [9] });
    expect(att).toEqual({ decision: { outcome: { reason: "ok" } }, signature: "sig", list: [1, 2] });
    expect(resolveValue({ $with: { value: "{{capture:att}}", remove: ["/signature"] } }, scope)).not.toHaveProperty("signature");
    expect(() => resolveValue({ $with: { value: "{{capture:att}}", remove: ["/missing"] } }, scope)).toThrow(
      "`$with`: cannot remove `/missing`: it does not exist",
    );
    expect(() => resolveValue({ $with: { value: "{{capture:att}}", set: { "/a/b": 1 } } }, scope)).toThrow(
      "`$with`: cannot set `/a/b`: its parent does not exist",
    );
  });
});

describe("JSON pointers (RFC 6901)", () => {
  const doc = { "": 0, a: { "b/c": [10, { "d~e": "x" }] } };

  it("resolve with ~0 and ~1 escapes", () => {
    expect(resolvePointer(doc, "")).toEqual({ found: true, value: doc });
    expect(resolvePointer(doc, "/")).toEqual({ found: true, value: 0 });
    expect(resolvePointer(doc, "/a/b~1c/1/d~0e")).toEqual({ found: true, value: "x" });
    expect(resolvePointer(doc, "/a/b~1c/2")).toEqual({ found: false });
    expect(resolvePointer(doc, "/a/b~1c/01")).toEqual({ found: false });
    expect(resolvePointer(doc, "/a/x/y")).toEqual({ found: false });
  });

  it("refuse malformed pointers", () => {
    expect(() => tokensOf("a")).toThrow("`a` is not a JSON pointer: it must be empty or start with `/`");
    expect(() => tokensOf("/a~2")).toThrow("`/a~2` has an invalid escape: only ~0 and ~1 are defined");
  });

  it("withChanges replaces the whole document for the empty pointer", () => {
    expect(withChanges({ a: 1 }, { "": [1] }, [])).toEqual([1]);
  });
});

describe("building a step's request", () => {
  it("auth variants: the key, nothing, a near miss, another scheme, an empty Bearer", () => {
    expect(authorizationFor("valid", "k3y-0123456789abcdef")).toBe("Bearer k3y-0123456789abcdef");
    expect(authorizationFor("none", "k")).toBeUndefined();
    expect(wrongKeyFor("abcdef")).toBe("abcdex");
    expect(wrongKeyFor("abcdex")).toBe("abcdey");
    expect(authorizationFor("wrong-key", "abcdef")).toBe("Bearer abcdex");
    expect(authorizationFor("not-bearer", "k")).toBe(`Basic ${Buffer.from("conformance:k").toString("base64")}`);
    expect(authorizationFor("empty-bearer", "k")).toBe("Bearer");
  });

  it("a JSON body with templates, the key and the JSON content type", () => {
    const scope = new CaseScope();
    const built = buildRequest({ method: "POST", path: "/evaluate", body: { executionId: "{{uuid:e}}", n: 1 } }, scope, "key");
    expect(built.headers).toEqual({ authorization: "Bearer key", "content-type": "application/json" });
    expect(JSON.parse(built.body!.toString())).toEqual({ executionId: scope.uuid("e"), n: 1 });
    expect(built.chunked).toBe(false);
  });

  it("a raw body is sent verbatim, templates and all; extra headers override", () => {
    const built = buildRequest(
      { method: "POST", path: "/verify", auth: "none", rawBody: '{"x": {{uuid}}', headers: { "Content-Type": "text/plain" } },
      new CaseScope(),
      "key",
    );
    expect(built.body!.toString()).toBe('{"x": {{uuid}}');
    expect(built.headers).toEqual({ "content-type": "text/plain" });
  });

  it("a sized body is the same JSON value, exactly that many bytes, chunked when asked", () => {
    const padded = paddedJson({ a: "é" }, 100);
    expect(padded.length).toBe(100);
    expect(JSON.parse(padded.toString("utf8"))).toEqual({ a: "é" });
    expect(paddedJson({}, 2).toString()).toBe("{}");
    expect(() => paddedJson({ a: "long" }, 5)).toThrow("`oversizeBody.body` is already 12 bytes, more than 5");
    const built = buildRequest(
      { method: "POST", path: "/execute", oversizeBody: { bytes: 65_537, chunked: true } },
      new CaseScope(),
      "key",
    );
    expect(built.body!.length).toBe(65_537);
    expect(built.chunked).toBe(true);
  });
});
