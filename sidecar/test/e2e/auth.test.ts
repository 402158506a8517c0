/**
 * Spec section 5, against a real listening sidecar with the single key: every Surface A route but `GET /health` needs
 * `Authorization: Bearer <SERVICE_API_KEY>`, which opens both scopes (scoped keys: scoped-keys.test.ts); a missing or
 * non-matching key is 401 `{"error":"Unauthorized"}`;
 * authentication comes before everything else (routing, body parsing, size limit), so an unauthenticated caller
 * learns nothing; and a refused key is a security event that never contains the key (docs/audit.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SecurityEventRow } from "@writ/sidecar";
import { API_KEY, AUTH, ISO_INSTANT, answer, paddedBody, startE2eSidecar, uid, type E2eSidecar } from "../support/e2e.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { parseRaw, rawRequest } from "../support/raw-http.js";

let s: E2eSidecar;
beforeAll(async () => {
  s = await startE2eSidecar();
});
afterAll(async () => {
  await s.close();
});

const UNAUTHORIZED = { status: 401, body: { error: "Unauthorized" } };

/** Every Surface A route that needs the key, with a request that is fine once authenticated. */
const ROUTES: readonly { readonly method: "GET" | "POST"; readonly path: string; readonly body?: unknown }[] = [
  {
    method: "POST",
    path: "/evaluate",
    body: {
      executionId: "auth-probe",
      policyId: "conformance.transfer",
      policyVersion: "1.0.0",
      verifiedSignals: TRANSFER_SIGNALS.approved,
    },
  },
  {
    method: "POST",
    path: "/execute",
    body: { executionId: "auth-probe-x", policyId: "conformance.transfer", policyVersion: "1.0.0", signals: TRANSFER_SIGNALS.approved },
  },
  { method: "POST", path: "/verify", body: {} },
  {
    method: "POST",
    path: "/simulate",
    body: { policyId: "conformance.transfer", policyVersion: "1.0.0", signals: TRANSFER_SIGNALS.approved },
  },
  {
    method: "POST",
    path: "/override",
    body: { executionId: "auth-probe", approved: true, approvedBy: "a", approverRole: "b", reason: "c" },
  },
  {
    method: "POST",
    path: "/confirm-execution",
    body: { attestation: {}, executedAction: { actionType: "a", actionId: "b", actionTimestamp: "2026-01-01T00:00:00Z" } },
  },
  { method: "GET", path: "/policies/conformance.transfer/versions/1.0.0/schema" },
  { method: "GET", path: "/runtime/manifest" },
  { method: "GET", path: "/runtime/capabilities" },
  { method: "GET", path: "/audit/decisions" },
  { method: "GET", path: "/audit/decisions/auth-probe" },
  { method: "GET", path: "/audit/stats" },
  { method: "GET", path: "/audit/security" },
  { method: "GET", path: "/audit/log" },
  { method: "GET", path: "/audit/checkpoints" },
  { method: "GET", path: "/audit/export" },
  { method: "GET", path: "/metrics" },
  { method: "GET", path: "/admin/bundles" },
  { method: "POST", path: "/admin/reload" },
];

/** Authorization headers that must all be refused (undefined: no header at all). */
const REFUSED: readonly (readonly [name: string, header: string | undefined])[] = [
  ["no Authorization header", undefined],
  ["an empty header", ""],
  ["the scheme alone", "Bearer"],
  ["the key without a scheme", API_KEY],
  ["the key under Basic", `Basic ${API_KEY}`],
  ["the key base64'd under Basic", `Basic ${Buffer.from(`user:${API_KEY}`).toString("base64")}`],
  ["the key under Token", `Token ${API_KEY}`],
  ["a wrong key", "Bearer not-the-key-0123456789abcdef"],
  ["the key with a character appended", `Bearer ${API_KEY}x`],
  ["the key with a character prepended", `Bearer x${API_KEY}`],
  ["the key without its last character", `Bearer ${API_KEY.slice(0, -1)}`],
  ["the key in another case", `Bearer ${API_KEY.toUpperCase()}`],
  ["the key twice", `Bearer ${API_KEY} ${API_KEY}`],
  ["two credentials", `Bearer ${API_KEY}, Bearer ${API_KEY}`],
];

function request(method: string, path: string, body: unknown, authorization: string | undefined) {
  return s.send(method, path, {
    headers: {
      ...(authorization === undefined ? {} : { authorization }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe.each(ROUTES)("$method $path", ({ method, path, body }) => {
  it.each(REFUSED)("refuses %s with 401 Unauthorized", async (_name, header) => {
    expect(answer(await request(method, path, body, header))).toEqual(UNAUTHORIZED);
  });

  it("accepts the key", async () => {
    expect((await request(method, path, body, `Bearer ${API_KEY}`)).status).not.toBe(401);
  });
});

describe("GET /health", () => {
  it.each(REFUSED)("needs no key (%s)", async (_name, header) => {
    const r = await request("GET", "/health", undefined, header);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "ok" });
  });

  it("HEAD /health needs no key either", async () => {
    expect((await request("HEAD", "/health", undefined, undefined)).status).toBe(200);
  });
});

describe("the key's scheme", () => {
  // RFC 9110 section 11.1: the scheme name is case-insensitive (the key itself is not, see above).
  it("`bearer` in lower case is the Bearer scheme", async () => {
    expect((await request("GET", "/audit/stats", undefined, `bearer ${API_KEY}`)).status).toBe(200);
  });
});

describe("unknown routes", () => {
  const UNKNOWN: readonly (readonly [string, string])[] = [
    ["GET", "/admin"],
    ["GET", "/evaluate"],
    ["DELETE", "/evaluate"],
    ["PUT", "/override"],
    ["POST", "/evaluate/extra"],
    ["GET", "/health/"],
    ["POST", "/health"],
    ["GET", "/audit"],
  ];

  it.each(UNKNOWN)("%s %s is 401 without the key (nothing about which routes exist)", async (method, path) => {
    expect(answer(await request(method, path, undefined, undefined))).toEqual(UNAUTHORIZED);
  });

  it.each(UNKNOWN)("%s %s is 404 with the key", async (method, path) => {
    expect(answer(await s.send(method, path, { headers: AUTH }))).toEqual({ status: 404, body: { error: "not found" } });
  });

  // The router refuses these before any hook runs; its errors still authenticate first (frameworkErrors).
  it.each([
    ["bad percent-encoding", "/nope/%ZZ"],
    ["a path parameter over 100 characters", `/audit/decisions/${"x".repeat(101)}`],
  ])("a malformed URL (%s) is 401 without the key", async (_name, path) => {
    expect(answer(await request("GET", path, undefined, undefined))).toEqual(UNAUTHORIZED);
  });
});

describe("authentication comes first", () => {
  it("an unauthenticated body that is not JSON is 401, not 400", async () => {
    const r = await s.send("POST", "/evaluate", { headers: { "content-type": "application/json" }, body: '{"a":1,"a":2}' });
    expect(answer(r)).toEqual(UNAUTHORIZED);
  });

  it("an unauthenticated body over 64 KB is 401, not 413", async () => {
    const body = paddedBody({ policyId: "conformance.transfer", policyVersion: "1.0.0", signals: TRANSFER_SIGNALS.approved }, 70_000);
    expect(answer(await s.send("POST", "/simulate", { headers: { "content-type": "application/json" }, body }))).toEqual(UNAUTHORIZED);
  });

  it("an unauthenticated /execute does not spend the rate limit budget", async () => {
    const r = await s.send("POST", "/execute", { headers: { "content-type": "application/json" }, body: "{}" });
    expect(answer(r)).toEqual(UNAUTHORIZED);
    expect(r.headers.get("x-ratelimit-remaining")).toBeNull();
  });
});

describe("a refused key is a security event, without the key", () => {
  const event = (method: string, path: string, detail: string) => ({
    id: expect.stringMatching(/^\d+-\d+$/),
    at: expect.stringMatching(ISO_INSTANT),
    type: "authentication_failed",
    method,
    path,
    ip: "127.0.0.1",
    detail,
  });

  // Each on a fresh sidecar: further refusals from the same address within the aggregation interval are counted into
  // one row when it ends (docs/audit.md, "Bounds"; test/storage/lmdb/audit-log.bounds.test.ts).
  it.each<[string, (s: E2eSidecar, marker: string) => Promise<unknown>, ReturnType<typeof event>]>([
    [
      "no header, the key in the query string",
      (s, marker) => s.send("GET", `/audit/stats?api_key=${API_KEY}&m=${marker}`, {}),
      event("GET", "/audit/stats", "no Authorization header"),
    ],
    [
      "a wrong key, the key in the body",
      (s) =>
        s.send("POST", "/evaluate", {
          headers: { authorization: `Bearer ${API_KEY}x`, "content-type": "application/json" },
          body: JSON.stringify({ apiKey: API_KEY }),
        }),
      event("POST", "/evaluate", "Bearer key does not match"),
    ],
    [
      "another scheme",
      (s) => s.send("GET", "/runtime/manifest", { headers: { authorization: `Basic ${API_KEY}` } }),
      event("GET", "/runtime/manifest", "Bearer key does not match"),
    ],
  ])("records method, path (query cut), address and a detail; the key appears nowhere: %s", async (_name, refuse, expected) => {
    const fresh = await startE2eSidecar();
    try {
      const marker = uid("q");
      await refuse(fresh, marker);
      const events = await fresh.call<SecurityEventRow[]>("GET", "/audit/security");
      expect(events.status).toBe(200);
      expect(events.body).toEqual([expected]);
      expect(events.text).not.toContain(API_KEY);
      expect(events.text).not.toContain(marker);
      expect((await fresh.call<Record<string, string>>("GET", "/audit/stats")).body["total_security_events"]).toBe("1");
    } finally {
      await fresh.close();
    }
  });
});

describe("two Authorization headers", () => {
  it("are refused, even when one of them holds the key (a proxy appending its own is not bypassed)", async () => {
    for (const headers of [
      [`Bearer ${API_KEY}`, "Bearer appended-by-a-proxy"],
      ["Bearer appended-by-a-proxy", `Bearer ${API_KEY}`],
      [`Bearer ${API_KEY}`, `Bearer ${API_KEY}`],
    ]) {
      const answer = await rawRequest(
        s.url,
        `GET /audit/stats HTTP/1.1\r\nHost: x\r\nAuthorization: ${headers[0]}\r\nAuthorization: ${headers[1]}\r\nConnection: close\r\n\r\n`,
      );
      expect(parseRaw(answer)).toEqual({ status: 401, body: JSON.stringify({ error: "Unauthorized" }) });
    }
  });
});
