/**
 * The check every end-to-end support makes of the answers it saw (support/openapi.ts): it must refuse what its
 * document does not say, or the suites would pass it unread.
 */
import { describe, expect, it } from "vitest";
import { checkerOf, type RecordedAnswer } from "../support/openapi.js";

const JSON_TYPE = "application/json; charset=utf-8";
const a = checkerOf("surface-a");
const b = checkerOf("surface-b");

function answer(method: string, path: string, status: number, body: unknown, contentType = JSON_TYPE): RecordedAnswer {
  return { method, path, status, contentType, text: body === undefined ? "" : JSON.stringify(body) };
}

describe("an answer checked against its operation", () => {
  it("passes when its status, media type and body are the document's", () => {
    expect(a.problemOf(answer("GET", "/runtime/capabilities", 200, { capabilities: ["evaluate"] }))).toBeNull();
    expect(a.problemOf(answer("GET", "/audit/decisions/some-id", 404, { error: "decision not found" }))).toBeNull();
    expect(
      a.problemOf(
        answer("GET", "/audit/decisions?limit=x", 400, { error: "Invalid request", details: [{ path: "querystring", message: "m" }] }),
      ),
    ).toBeNull();
    expect(
      a.problemOf({
        method: "GET",
        path: "/metrics",
        status: 200,
        contentType: "text/plain; version=0.0.4; charset=utf-8",
        text: "# HELP x\n",
      }),
    ).toBeNull();
  });

  it("fails on a member the schema does not have, a missing member, or a wrong type", () => {
    expect(a.problemOf(answer("GET", "/runtime/capabilities", 200, { capabilities: ["evaluate"], extra: 1 }))).toContain(
      "must NOT have additional properties",
    );
    expect(a.problemOf(answer("GET", "/runtime/capabilities", 200, {}))).toContain("must have required property 'capabilities'");
    expect(a.problemOf(answer("GET", "/audit/stats", 200, { total_decisions: 1 }))).toContain("body/total_decisions must be string");
  });

  it("fails on a status the operation does not document, and on another media type", () => {
    expect(a.problemOf(answer("POST", "/evaluate", 418, { error: "teapot" }))).toContain("does not document 418");
    expect(a.problemOf(answer("GET", "/runtime/capabilities", 200, "text", "text/plain"))).toContain("documented as application/json");
  });

  it("HEAD: Surface A documents each GET's twin, without a body; Surface B has none", () => {
    expect(a.problemOf(answer("HEAD", "/health", 200, undefined))).toBeNull();
    expect(a.problemOf(answer("HEAD", "/health", 200, { status: "ok" }))).toContain("documented without a body");
    expect(b.operationOf("HEAD", "/health")).toBeUndefined();
  });

  it("leaves alone a request no operation is: a route that does not exist, a method a path does not have", () => {
    expect(a.problemOf(answer("GET", "/nowhere", 404, { error: "not found" }))).toBeNull();
    expect(b.problemOf(answer("GET", "/execute", 404, { error: "not found" }))).toBeNull();
    expect(b.operationOf("GET", "/transactions/some-id?x=1")?.route).toBe("GET /transactions/{id}");
  });
});
