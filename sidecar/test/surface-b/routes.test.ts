/**
 * Surface B's route table on a real listener (spec 4.2, docs/sidecar.md): exactly 13 routes and nothing else,
 * the Bearer key on every route but `GET /health` and `GET /version`, and those two answering exactly the spec's
 * bodies. Surface A's routes are not served on Surface B's port.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY } from "../support/sidecar.js";
import { AUTH, JSON_TYPE, startSurfaceB, type SurfaceB } from "./support.js";

let b: SurfaceB;
beforeAll(async () => {
  b = await startSurfaceB();
});
afterAll(async () => {
  await b.close();
});

const PROTECTED: readonly (readonly [string, string])[] = [
  ["POST", "/execute"],
  ["GET", "/transactions"],
  ["GET", "/transactions/some-id"],
  ["POST", "/transactions"],
  ["POST", "/verify"],
  ["GET", "/verification/some-id"],
  ["POST", "/receipt"],
  ["GET", "/receipt/latest/some-id"],
  ["POST", "/replay"],
  ["GET", "/trust-records/some-id"],
  ["POST", "/policies/validate"],
];
const UNAUTHORIZED = { status: 401, body: { error: "Unauthorized" } };
const NOT_FOUND = { status: 404, body: { error: "not found" } };

describe("the two public routes", () => {
  it("GET /health is exactly {status: UP}, without the key", async () => {
    const r = await b.send("GET", "/health");
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { status: "UP" } });
  });

  it("GET /version is the hardcoded name, version and api (spec 9), without the key", async () => {
    const r = await b.send("GET", "/version");
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { name: "writ", version: "0.4.0", api: "v1" } });
  });

  it("answer the same with the key", async () => {
    expect((await b.call("GET", "/health")).body).toEqual({ status: "UP" });
    expect((await b.call("GET", "/version")).body).toEqual({ name: "writ", version: "0.4.0", api: "v1" });
  });
});

describe("Bearer authentication on the other 11 routes", () => {
  it.each(PROTECTED)("%s %s without a key is 401", async (method, path) => {
    const r = await b.send(method, path, method === "POST" ? { body: "{}", headers: JSON_TYPE } : {});
    expect({ status: r.status, body: r.body }).toEqual(UNAUTHORIZED);
  });

  it.each(PROTECTED)("%s %s with a wrong key is 401", async (method, path) => {
    const r = await b.send(method, path, {
      headers: { authorization: `Bearer ${API_KEY}x`, ...(method === "POST" ? JSON_TYPE : {}) },
      ...(method === "POST" ? { body: "{}" } : {}),
    });
    expect({ status: r.status, body: r.body }).toEqual(UNAUTHORIZED);
  });

  it.each(PROTECTED)("%s %s with the key is served (not 401, not the router's 404)", async (method, path) => {
    const r = await b.call(method, path, method === "POST" ? {} : undefined);
    expect(r.status).not.toBe(401);
    expect(r.body).not.toEqual(NOT_FOUND.body);
  });
});

describe("no other route", () => {
  it.each([
    ["GET", "/"],
    ["GET", "/evaluate"],
    ["POST", "/evaluate"],
    ["POST", "/simulate"],
    ["POST", "/override"],
    ["POST", "/confirm-execution"],
    ["GET", "/runtime/manifest"],
    ["GET", "/audit/decisions"],
    ["GET", "/metrics"],
    ["GET", "/execute"],
    ["PUT", "/transactions"],
    ["DELETE", "/transactions/some-id"],
    ["GET", "/receipt/latest"],
    ["GET", "/receipt/some-id"],
    ["GET", "/verification"],
    ["GET", "/trust-records"],
    ["GET", "/policies/validate"],
    ["HEAD", "/transactions"],
    ["HEAD", "/health"],
    ["OPTIONS", "/execute"],
  ])("%s %s is 404 with the key", async (method, path) => {
    const r = await b.send(method, path, { headers: AUTH });
    expect(r.status).toBe(404);
    if (method !== "HEAD") expect(r.body).toEqual(NOT_FOUND.body);
  });

  it.each(["/transactions", "/trust-records", "/verification", "/receipt/latest"])(
    "GET %s/:id with a 1,000-character id is 400, no crash",
    async (path) => {
      expect((await b.send("GET", `${path}/${"x".repeat(1000)}`, { headers: AUTH })).status).toBe(400);
    },
  );

  it("an unknown route without the key is 401: the caller learns nothing about which routes exist", async () => {
    const r = await b.send("GET", "/evaluate");
    expect({ status: r.status, body: r.body }).toEqual(UNAUTHORIZED);
  });
});
