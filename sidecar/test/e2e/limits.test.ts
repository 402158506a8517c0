/**
 * Spec section 8's limits on a real listening sidecar: request bodies up to 65,536 bytes, 413 above, whether the
 * size is announced (content-length) or not (chunked); and 100 `POST /execute` a minute, the 101st answered 429 with
 * the window in the body (`limit`, `remaining`, `reset`, spec 7) and in the standard rate-limit headers, and recorded
 * as a security event.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SecurityEventRow } from "@writ/sidecar";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import {
  AUTH,
  ISO_INSTANT,
  JSON_TYPE,
  TRANSFER,
  answer,
  chunksOf,
  evaluate,
  paddedBody,
  postChunked,
  startE2eSidecar,
  uid,
  type E2eSidecar,
} from "../support/e2e.js";

let s: E2eSidecar;
beforeAll(async () => {
  s = await startE2eSidecar();
});
afterAll(async () => {
  await s.close();
});

const LIMIT = 65_536;
const TOO_LARGE = { status: 413, body: { error: "Request body too large" } };
const executeBody = () => ({ executionId: uid("limit"), ...TRANSFER, signals: TRANSFER_SIGNALS.approved });
const simulateBody = () => ({ ...TRANSFER, signals: TRANSFER_SIGNALS.approved });

describe("body size with content-length (spec 8: 64 KB, 413 above)", () => {
  it("POST /execute: 65,536 bytes are accepted and signed, 65,537 are 413", async () => {
    const atLimit = await s.call<{ status: string }>("POST", "/execute", paddedBody(executeBody(), LIMIT));
    expect(atLimit.status).toBe(200);
    expect(atLimit.body.status).toBe("approved");
    expect(answer(await s.call("POST", "/execute", paddedBody(executeBody(), LIMIT + 1)))).toEqual(TOO_LARGE);
  });

  it.each(["/evaluate", "/verify", "/simulate", "/override", "/confirm-execution"])("POST %s: 65,537 bytes are 413", async (path) => {
    expect(answer(await s.call("POST", path, paddedBody(simulateBody(), LIMIT + 1)))).toEqual(TOO_LARGE);
  });

  it("POST /simulate: 65,536 bytes are accepted", async () => {
    expect((await s.call("POST", "/simulate", paddedBody(simulateBody(), LIMIT))).status).toBe(200);
  });

  it("the limit counts bytes, not characters", async () => {
    // 3 bytes per character: under 65,536 characters, over 65,536 bytes.
    const wide = JSON.stringify({ ...simulateBody(), signalProvenance: { note: "€".repeat(22_000) } });
    expect(wide.length).toBeLessThan(LIMIT);
    expect(Buffer.byteLength(wide)).toBeGreaterThan(LIMIT);
    expect(answer(await s.call("POST", "/simulate", wide))).toEqual(TOO_LARGE);
  });
});

describe("body size with Transfer-Encoding: chunked (no content-length)", () => {
  const headers = { ...AUTH, ...JSON_TYPE };

  it("65,536 bytes in 1 KB chunks are accepted", async () => {
    const r = await postChunked(s.url, "/execute", chunksOf(paddedBody(executeBody(), LIMIT), 1024), headers);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toMatchObject({ status: "approved" });
  });

  it("65,537 bytes in 1 KB chunks are 413", async () => {
    const r = await postChunked(s.url, "/execute", chunksOf(paddedBody(executeBody(), LIMIT + 1), 1024), headers);
    expect({ status: r.status, body: JSON.parse(r.text) as unknown }).toEqual(TOO_LARGE);
  });

  it("a large body in one chunk is 413", async () => {
    const r = await postChunked(s.url, "/simulate", [Buffer.from(paddedBody(simulateBody(), 200_000))], headers);
    expect({ status: r.status, body: JSON.parse(r.text) as unknown }).toEqual(TOO_LARGE);
  });
});

describe("rate limit: 100 POST /execute a minute (spec 8)", () => {
  let limited: E2eSidecar;
  beforeAll(async () => {
    limited = await startE2eSidecar();
  });
  afterAll(async () => {
    await limited.close();
  });

  it("the first 100 are served with the window in the headers, the 101st is 429 with limit, remaining and reset", async () => {
    const served = await Promise.all(
      Array.from({ length: 100 }, () => limited.call<{ status: string }>("POST", "/execute", executeBody())),
    );
    expect(served.map((r) => r.status)).toEqual(Array<number>(100).fill(200));
    expect(served.map((r) => r.headers.get("x-ratelimit-limit"))).toEqual(Array<string>(100).fill("100"));
    const remaining = served.map((r) => Number(r.headers.get("x-ratelimit-remaining"))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i));

    const before = Math.floor(Date.now() / 1000);
    const refusedId = uid("limited");
    const r = await limited.call<{ reset: number }>("POST", "/execute", { ...executeBody(), executionId: refusedId });
    const after = Math.ceil(Date.now() / 1000);
    expect(answer(r)).toEqual({ status: 429, body: { error: "Rate limit exceeded", limit: 100, remaining: 0, reset: expect.any(Number) } });
    // `reset` is a Unix timestamp in seconds, within the next minute.
    expect(Number.isInteger(r.body.reset)).toBe(true);
    expect(r.body.reset).toBeGreaterThanOrEqual(before);
    expect(r.body.reset).toBeLessThanOrEqual(after + 60);
    // The standard headers: the limit, nothing left, and seconds until the window resets.
    expect(r.headers.get("x-ratelimit-limit")).toBe("100");
    expect(r.headers.get("x-ratelimit-remaining")).toBe("0");
    for (const name of ["x-ratelimit-reset", "retry-after"]) {
      const seconds = Number(r.headers.get(name));
      expect(seconds, name).toBeGreaterThan(0);
      expect(seconds, name).toBeLessThanOrEqual(60);
    }

    // Refused before anything happened: no decision, and its executionId is still unused.
    expect((await limited.call("GET", `/audit/decisions/${refusedId}`)).status).toBe(404);
    expect((await evaluate(limited, TRANSFER_SIGNALS.approved, refusedId)).status).toBe(200);
  });

  it("the refusal is a security event (after the 101st above)", async () => {
    const events = await limited.call<SecurityEventRow[]>("GET", "/audit/security");
    expect(events.body).toEqual([
      {
        id: expect.stringMatching(/^\d+-\d+$/),
        at: expect.stringMatching(ISO_INSTANT),
        type: "rate_limited",
        method: "POST",
        path: "/execute",
        ip: "127.0.0.1",
        detail: "more than 100 POST /execute in a minute",
      },
    ]);
  });

  it("only POST /execute is limited: /evaluate and /simulate still answer, without rate-limit headers", async () => {
    expect((await limited.call("POST", "/execute", executeBody())).status).toBe(429);
    const evaluated = await evaluate(limited, TRANSFER_SIGNALS.approved);
    expect(evaluated.status).toBe(200);
    expect(evaluated.headers.get("x-ratelimit-limit")).toBeNull();
    expect((await limited.call("POST", "/simulate", simulateBody())).status).toBe(200);
  });
});
