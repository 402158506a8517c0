/**
 * Surface B under the sidecar's configuration (docs/sidecar.md): alone, with Surface A off; with the replay
 * store off (fails closed) or in memory (a record outlives its replay entry across a restart, and is still never
 * replaced); and without a data dir (so without a record store or a generated signing key), where it still serves
 * the routes that need neither and answers 503 on the others, after the UUID check.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, startSidecar, type RunningSidecar } from "@writ/sidecar";
import { fixturePoliciesRoot } from "../support/policies.js";
import { API_KEY } from "../support/sidecar.js";
import type { TrustRecord } from "@writ/sidecar";
import { AUTH, JSON_TYPE, businessTransaction, startSurfaceB, type SurfaceB } from "./support.js";

const NOT_CONFIGURED = { status: 503, body: { error: "Governed execution runtime not configured" } };

describe("Surface B alone (SERVICE_PORT off)", () => {
  let b: SurfaceB;
  beforeAll(async () => {
    b = await startSurfaceB({ env: { SERVICE_PORT: "off" } });
  });
  afterAll(async () => {
    await b.close();
  });

  it("listens on its own URL and executes", async () => {
    expect(b.running.urls.a).toBeNull();
    expect((await b.call("POST", "/execute", businessTransaction())).status).toBe(200);
  });
});

describe("replay store settings", () => {
  it("SERVICE_REPLAY_STORE=none: every execution fails closed with INV-REPLAY-001, nothing stored", async () => {
    const b = await startSurfaceB({ env: { SERVICE_REPLAY_STORE: "none" } });
    try {
      const body = businessTransaction();
      const r = await b.call("POST", "/execute", body);
      expect({ status: r.status, body: r.body }).toEqual({
        status: 422,
        body: { error: "[INV-REPLAY-001@replay] no replay store configured" },
      });
      expect((await b.call("GET", `/trust-records/${body.businessTransactionId}`)).status).toBe(404);
    } finally {
      await b.close();
    }
  });

  it("SERVICE_REPLAY_STORE=memory: after a restart the id is free in the replay store, yet its record is not replaced", async () => {
    const env = { SERVICE_REPLAY_STORE: "memory" };
    let b = await startSurfaceB({ env });
    const body = businessTransaction();
    const first = (await b.call<TrustRecord>("POST", "/execute", body)).body;
    await b.stop();
    b = await startSurfaceB({ env, dataDir: b.dataDir });
    try {
      const again = await b.call("POST", "/execute", { ...body, signals: { ...first.signals, risk_score: 99 } });
      expect({ status: again.status, body: again.body }).toEqual({
        status: 422,
        body: { error: "[INV-013@replay] execution already consumed: use a new executionId" },
      });
      expect((await b.call("GET", `/trust-records/${body.businessTransactionId}`)).body).toEqual(first);
    } finally {
      await b.close();
    }
  });
});

describe("without a data dir", () => {
  let running: RunningSidecar;
  let url: string;
  beforeAll(async () => {
    running = await startSidecar(
      loadConfig({
        SERVICE_API_KEY: API_KEY,
        SERVICE_POLICIES_ROOT: await fixturePoliciesRoot(),
        SERVICE_PORT: "off",
        SERVICE_B_PORT: "0",
        SERVICE_LOG_LEVEL: "silent",
      }),
    );
    url = running.urls.b!;
  });
  afterAll(async () => {
    await running.close();
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { ...AUTH, ...(body === undefined ? {} : JSON_TYPE) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, body: (await r.json()) as unknown };
  };

  it("serves /health, /version and /policies/validate", async () => {
    expect(await call("GET", "/health")).toEqual({ status: 200, body: { status: "UP" } });
    expect((await call("GET", "/version")).status).toBe(200);
    expect(await call("POST", "/policies/validate", { policyId: "conformance.transfer", policyVersion: "1.0.0" })).toEqual({
      status: 200,
      body: { valid: true, errors: [] },
    });
  });

  it("answers 503 on the routes that need the record store or the signer", async () => {
    const id = randomUUID();
    expect(await call("POST", "/execute", businessTransaction({ businessTransactionId: id }))).toEqual(NOT_CONFIGURED);
    expect(
      await call("POST", "/transactions", {
        businessTransactionId: id,
        policy: { name: "conformance.transfer", version: "1.0.0" },
        signals: {},
      }),
    ).toEqual(NOT_CONFIGURED);
    expect(await call("GET", "/transactions")).toEqual(NOT_CONFIGURED);
    for (const path of ["/transactions", "/trust-records", "/verification", "/receipt/latest"])
      expect(await call("GET", `${path}/${id}`)).toEqual(NOT_CONFIGURED);
    for (const path of ["/verify", "/receipt", "/replay"])
      expect(await call("POST", path, { businessTransactionId: id })).toEqual(NOT_CONFIGURED);
  });

  it("still checks the UUID first", async () => {
    expect(await call("POST", "/execute", businessTransaction({ businessTransactionId: "nope" }))).toEqual({
      status: 400,
      body: { error: "businessTransactionId must be a valid UUID." },
    });
  });
});
