/**
 * Readiness covers the store (surface-a/readiness.ts): `GET /health?probe=ready` is 503 while no bundle is served OR
 * the store fails writes, `GET /health` stays 200 whatever they say, and the body says which component is not ready.
 * The decision on its own, then Surface A of a sidecar on LMDB whose store reports failing writes (a full disk, as
 * LmdbDurability reports it: provoking one takes a tmpfs, hardening/full-disk.stress.test.ts). PostgreSQL, with the database
 * really gone: fleet/readiness.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSurfaceA, createMetrics, OPENAPI_TEXTS } from "@writ/sidecar";
import type { StoreHealth } from "../../src/storage/backend.js";
import { isReady } from "../../src/surface-a/readiness.js";
import { assertDocumented, checkerOf, type RecordedAnswer } from "../support/openapi.js";
import { startTestSidecar, type TestSidecar } from "../support/sidecar.js";

describe("the readiness decision", () => {
  it.each([
    [true, "ok", true],
    [true, "none", true],
    [false, "ok", false],
    [true, "error", false],
    [false, "error", false],
    [false, "none", false],
  ] as const)("bundles ready %s, store %s: ready %s", (bundlesReady, status, ready) => {
    expect(isReady({ ready: bundlesReady }, { status })).toBe(ready);
  });
});

describe("GET /health of a sidecar on LMDB whose data dir fails writes", () => {
  let s: TestSidecar;
  beforeAll(async () => {
    s = await startTestSidecar();
  });
  afterAll(async () => {
    await s?.close();
  });

  /** Surface A of the same sidecar, its store reporting `health`; every answer checked against the OpenAPI document. */
  async function health(store: StoreHealth, probe: boolean): Promise<{ status: number; body: Record<string, unknown> }> {
    const app = await buildSurfaceA({ ...s.sidecar.context, storeHealth: () => store }, createMetrics(), OPENAPI_TEXTS);
    try {
      const path = probe ? "/health?probe=ready" : "/health";
      const answer = await app.inject({ method: "GET", url: path });
      const recorded: RecordedAnswer = {
        method: "GET",
        path,
        status: answer.statusCode,
        contentType: String(answer.headers["content-type"] ?? ""),
        text: answer.body,
      };
      assertDocumented(checkerOf("surface-a"), [recorded]);
      return { status: answer.statusCode, body: answer.json() };
    } finally {
      await app.close();
    }
  }

  const FAILING: StoreHealth = {
    ok: false,
    problem: "data dir write failed: no space left on device (ENOSPC)",
    since: "2026-01-01T00:00:00.000Z",
  };

  it("takes writes: ready 200", async () => {
    expect(await health({ ok: true, problem: null, since: null }, true)).toMatchObject({
      status: 200,
      body: { ready: true, store: { status: "ok" } },
    });
  });

  it("fails writes: readiness 503 saying the store is why (the bundles are served); liveness 200 with the same body", async () => {
    const ready = await health(FAILING, true);
    expect(ready).toMatchObject({
      status: 503,
      body: {
        status: "ok",
        ready: false,
        bundles: { ready: true },
        store: { status: "error", problem: FAILING.problem, since: FAILING.since },
      },
    });
    const live = await health(FAILING, false);
    expect(live.status).toBe(200);
    expect({ ...live.body, event_loop_lag_ms: 0 }).toEqual({ ...ready.body, event_loop_lag_ms: 0 });
  });

  it("the real sidecar's store takes writes: ready 200", async () => {
    const { status, body } = await s.call("GET", "/health?probe=ready");
    expect(status).toBe(200);
    expect(body).toMatchObject({ ready: true, store: { status: "ok" }, bundles: { ready: true } });
  });
});
