/**
 * Scoped keys (docs/sidecar.md, "Scoped keys"), against a real listening sidecar with both surfaces: the deciding key
 * opens the deciding routes of Surface A and all of Surface B, the reading key the audit, metrics and admin routes;
 * a key of one scope is 401 on the other, like a wrong key (the same body, the same security event); SERVICE_API_KEY
 * beside them opens both; and every route either surface serves has a scope in its surface's table (routes.ts).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SecurityEventRow } from "@writ/sidecar";
import { buildSurfaceA, buildSurfaceB, createMetrics, OPENAPI_TEXTS } from "@writ/sidecar";
import { DEFAULT_CONNECTION_LIMITS } from "../../src/http/connections.js";
import type { Access, RouteScopes, Scope } from "../../src/http/scopes.js";
import { SURFACE_A_SCOPES } from "../../src/surface-a/routes.js";
import { SURFACE_B_SCOPES } from "../../src/surface-b/routes.js";
import { createServer } from "../../src/http/server.js";
import { createLogger } from "../../src/observability/logger.js";
import { API_KEY, ISO_INSTANT, answer, startE2eSidecar, type E2eSidecar } from "../support/e2e.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { servedRoutes } from "../support/routes.js";

const DECIDE_KEY = "e2e-decide-key-0123456789abcdef";
const READ_KEY = "e2e-read-key-0123456789abcdef-R";
const SCOPED = { SERVICE_API_KEY: undefined, SERVICE_DECIDE_KEY: DECIDE_KEY, SERVICE_READ_KEY: READ_KEY, SERVICE_B_PORT: "0" };
const UNAUTHORIZED = { status: 401, body: { error: "Unauthorized" } };

interface Probe {
  readonly path: string;
  readonly body?: unknown;
}

/**
 * Each route that needs a key, its scope as docs/sidecar.md gives it (written here, not read from the table, so a
 * change of the table fails), and a request to it that is fine, or at worst a 4xx, once authenticated.
 */
const PROBES: Readonly<Record<"a" | "b", Readonly<Record<string, Probe & { readonly scope: Scope }>>>> = {
  a: {
    "POST /evaluate": {
      scope: "deciding",
      path: "/evaluate",
      body: {
        executionId: "scope-probe",
        policyId: "conformance.transfer",
        policyVersion: "1.0.0",
        verifiedSignals: TRANSFER_SIGNALS.approved,
      },
    },
    "POST /execute": {
      scope: "deciding",
      path: "/execute",
      body: { executionId: "scope-probe-x", policyId: "conformance.transfer", policyVersion: "1.0.0", signals: TRANSFER_SIGNALS.approved },
    },
    "POST /simulate": {
      scope: "deciding",
      path: "/simulate",
      body: { policyId: "conformance.transfer", policyVersion: "1.0.0", signals: TRANSFER_SIGNALS.approved },
    },
    "POST /override": {
      scope: "deciding",
      path: "/override",
      body: { executionId: "scope-probe", approved: true, approvedBy: "a", approverRole: "b", reason: "c" },
    },
    "POST /confirm-execution": {
      scope: "deciding",
      path: "/confirm-execution",
      body: { attestation: {}, executedAction: { actionType: "a", actionId: "b", actionTimestamp: "2026-01-01T00:00:00Z" } },
    },
    "POST /verify": { scope: "deciding", path: "/verify", body: {} },
    "GET /policies/:policyId/versions/:version/schema": { scope: "deciding", path: "/policies/conformance.transfer/versions/1.0.0/schema" },
    "GET /runtime/manifest": { scope: "deciding", path: "/runtime/manifest" },
    "GET /runtime/capabilities": { scope: "deciding", path: "/runtime/capabilities" },
    "GET /audit/decisions": { scope: "reading", path: "/audit/decisions" },
    "GET /audit/decisions/:executionId": { scope: "reading", path: "/audit/decisions/scope-probe" },
    "GET /audit/stats": { scope: "reading", path: "/audit/stats" },
    "GET /audit/security": { scope: "reading", path: "/audit/security" },
    "GET /audit/log": { scope: "reading", path: "/audit/log" },
    "GET /audit/logs": { scope: "reading", path: "/audit/logs" },
    "GET /audit/checkpoints": { scope: "reading", path: "/audit/checkpoints" },
    "GET /audit/checkpoints/:size": { scope: "reading", path: "/audit/checkpoints/1" },
    "GET /audit/proofs/inclusion": { scope: "reading", path: "/audit/proofs/inclusion?index=0&size=1" },
    "GET /audit/proofs/consistency": { scope: "reading", path: "/audit/proofs/consistency?from=1&to=1" },
    "GET /audit/export": { scope: "reading", path: "/audit/export" },
    "GET /metrics": { scope: "reading", path: "/metrics" },
    "GET /admin/bundles": { scope: "reading", path: "/admin/bundles" },
    "POST /admin/reload": { scope: "reading", path: "/admin/reload" },
  },
  b: {
    "POST /policies/validate": {
      scope: "deciding",
      path: "/policies/validate",
      body: { policyId: "conformance.transfer", policyVersion: "1.0.0" },
    },
    "POST /execute": { scope: "deciding", path: "/execute", body: {} },
    "POST /transactions": { scope: "deciding", path: "/transactions", body: {} },
    "GET /transactions": { scope: "deciding", path: "/transactions" },
    "GET /transactions/:id": { scope: "deciding", path: "/transactions/scope-probe" },
    "GET /trust-records/:id": { scope: "deciding", path: "/trust-records/scope-probe" },
    "POST /verify": { scope: "deciding", path: "/verify", body: {} },
    "GET /verification/:id": { scope: "deciding", path: "/verification/scope-probe" },
    "POST /receipt": { scope: "deciding", path: "/receipt", body: {} },
    "GET /receipt/latest/:id": { scope: "deciding", path: "/receipt/latest/scope-probe" },
    "POST /replay": { scope: "deciding", path: "/replay", body: {} },
  },
};

const TABLES: Readonly<Record<"a" | "b", RouteScopes>> = { a: SURFACE_A_SCOPES, b: SURFACE_B_SCOPES };
const KEY_OF = { deciding: DECIDE_KEY, reading: READ_KEY } as const;
const OTHER = { deciding: "reading", reading: "deciding" } as const;

/** Every route of a surface that needs a key, with its scope and probe. */
function keyedRoutes(surface: "a" | "b") {
  return Object.entries(PROBES[surface]).map(([route, probe]) => ({
    surface,
    route,
    method: route.split(" ", 1)[0]!,
    scope: probe.scope,
    probe,
  }));
}

async function request(base: string, method: string, probe: Probe, key: string | undefined) {
  const response = await fetch(`${base}${probe.path}`, {
    method,
    headers: {
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
      ...(probe.body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(probe.body === undefined ? {} : { body: JSON.stringify(probe.body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: (response.headers.get("content-type") ?? "").startsWith("application/json") && text !== "" ? JSON.parse(text) : text,
    text,
    headers: response.headers,
  };
}

let s: E2eSidecar;
let urls: { readonly a: string; readonly b: string };
beforeAll(async () => {
  s = await startE2eSidecar(SCOPED);
  urls = { a: s.running.urls.a!, b: s.running.urls.b! };
});
afterAll(async () => {
  await s.close();
});

describe("the scope table gives each route that needs a key the scope documented", () => {
  it.each(["a", "b"] as const)("Surface %s", (surface) => {
    const keyed = Object.entries(TABLES[surface]).filter(([, access]) => access !== "public");
    expect(Object.fromEntries(keyed)).toEqual(Object.fromEntries(keyedRoutes(surface).map((r) => [r.route, r.scope])));
  });
});

describe.each([...keyedRoutes("a"), ...keyedRoutes("b")])("Surface $surface $route ($scope)", ({ surface, method, scope, probe }) => {
  it(`refuses the ${OTHER[scope]} key with 401, as a wrong key`, async () => {
    expect(answer(await request(urls[surface], method, probe, KEY_OF[OTHER[scope]]))).toEqual(UNAUTHORIZED);
  });

  it(`accepts the ${scope} key`, async () => {
    expect((await request(urls[surface], method, probe, KEY_OF[scope])).status).not.toBe(401);
  });

  it("refuses no key and a wrong key", async () => {
    expect(answer(await request(urls[surface], method, probe, undefined))).toEqual(UNAUTHORIZED);
    expect(answer(await request(urls[surface], method, probe, `${DECIDE_KEY}x`))).toEqual(UNAUTHORIZED);
  });
});

// Surface A serves HEAD for every GET route (Surface B, exactly the spec's routes, does not).
describe.each(keyedRoutes("a").filter((r) => r.method === "GET"))("Surface A HEAD of $route", ({ scope, probe }) => {
  it(`has the scope of its GET (${scope})`, async () => {
    expect(answer(await request(urls.a, "HEAD", probe, KEY_OF[OTHER[scope]]))).toEqual({ status: 401, body: "" });
    expect((await request(urls.a, "HEAD", probe, KEY_OF[scope])).status).not.toBe(401);
  });
});

describe("routes without a key", () => {
  it.each<[string, "a" | "b", string]>([
    ["Surface A", "a", "/health"],
    ["Surface B", "b", "/health"],
    ["Surface B", "b", "/version"],
  ])("%s GET %s needs none", async (_name, surface, path) => {
    expect((await request(urls[surface], "GET", { path }, undefined)).status).toBe(200);
  });
});

describe("a route that does not exist", () => {
  it.each(["deciding", "reading"] as const)("is 404 with the %s key, 401 without a key", async (scope) => {
    expect(answer(await request(urls.a, "GET", { path: "/audit" }, KEY_OF[scope]))).toEqual({ status: 404, body: { error: "not found" } });
    expect(answer(await request(urls.a, "GET", { path: "/audit" }, undefined))).toEqual(UNAUTHORIZED);
  });
});

describe("a key of another scope is a security event, without the key", () => {
  it("is recorded as a key that does not match", async () => {
    const fresh = await startE2eSidecar(SCOPED);
    try {
      expect((await request(fresh.url, "GET", { path: "/audit/stats" }, DECIDE_KEY)).status).toBe(401);
      const events = await request(fresh.url, "GET", { path: "/audit/security" }, READ_KEY);
      expect(events.body as SecurityEventRow[]).toEqual([
        {
          id: expect.stringMatching(/^\d+-\d+$/),
          at: expect.stringMatching(ISO_INSTANT),
          type: "authentication_failed",
          method: "GET",
          path: "/audit/stats",
          ip: "127.0.0.1",
          detail: "Bearer key does not match",
        },
      ]);
      expect(events.text).not.toContain(DECIDE_KEY);
    } finally {
      await fresh.close();
    }
  });
});

describe("SERVICE_API_KEY beside scoped keys (the admin key)", () => {
  let both: E2eSidecar;
  beforeAll(async () => {
    both = await startE2eSidecar({ ...SCOPED, SERVICE_API_KEY: API_KEY });
  });
  afterAll(async () => {
    await both.close();
  });

  it.each([...keyedRoutes("a"), ...keyedRoutes("b")].map((r) => [r.surface, r.route, r] as const))(
    "opens Surface %s %s, where the other scope's key is still refused",
    async (surface, _route, r) => {
      const base = both.running.urls[surface]!;
      expect((await request(base, r.method, r.probe, API_KEY)).status).not.toBe(401);
      expect(answer(await request(base, r.method, r.probe, KEY_OF[OTHER[r.scope]]))).toEqual(UNAUTHORIZED);
    },
  );
});

describe("keys from files", () => {
  it("a reading key file opens the reading routes only", async () => {
    const dir = await mkdtemp(join(tmpdir(), "writ-e2e-keys-"));
    const file = join(dir, "read.key");
    await writeFile(file, `${READ_KEY}\n`, { mode: 0o600 });
    const fromFile = await startE2eSidecar({ ...SCOPED, SERVICE_READ_KEY: undefined, SERVICE_READ_KEY_FILE: file });
    try {
      expect((await request(fromFile.url, "GET", { path: "/audit/stats" }, READ_KEY)).status).toBe(200);
      expect(answer(await request(fromFile.url, "GET", { path: "/runtime/manifest" }, READ_KEY))).toEqual(UNAUTHORIZED);
    } finally {
      await fromFile.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the scope table", () => {
  it.each<["a" | "b", (ctx: E2eSidecar["running"]["context"]) => Promise<FastifyInstance>]>([
    ["a", (ctx) => buildSurfaceA(ctx, createMetrics(), OPENAPI_TEXTS)],
    ["b", async (ctx) => buildSurfaceB(ctx, createMetrics())],
  ])("has every route Surface %s serves, and no route it does not", async (surface, build) => {
    const app = await build(s.running.context);
    try {
      await app.ready();
      const served = servedRoutes(app.printRoutes({ commonPrefix: false }));
      expect(served.length).toBeGreaterThan(10);
      const access = (route: string): Access | undefined => TABLES[surface][route.replace(/^HEAD /, "GET ")];
      expect(served.filter((route) => access(route) === undefined)).toEqual([]);
      expect(Object.keys(TABLES[surface]).filter((route) => !served.includes(route))).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe("a route without a scope", () => {
  it("cannot be registered: the server refuses it rather than serve it to any key", async () => {
    const app = createServer({
      keys: { all: API_KEY, deciding: null, reading: null },
      scopes: { "GET /known": "deciding" },
      surface: "a",
      log: createLogger("silent"),
      accessLog: false,
      tracing: null,
      connections: DEFAULT_CONNECTION_LIMITS,
    });
    try {
      app.get("/known", async () => ({}));
      expect(() => app.post("/known", async () => ({}))).toThrow("POST /known has no scope in its surface's table");
      expect(() => app.get("/unknown", async () => ({}))).toThrow("GET /unknown has no scope in its surface's table");
    } finally {
      await app.close();
    }
  });
});
