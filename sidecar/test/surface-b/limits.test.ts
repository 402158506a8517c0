/**
 * Surface B's bodies have Surface A's bound (spec 8): up to 65,536 bytes, 413 `Request body too large` above,
 * announced (content-length) or not (chunked), on every POST route. The limit is enforced while the body is read,
 * so it comes before the UUID check of `POST /execute`, which needs the body.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chunksOf, postChunked } from "../support/e2e.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { AUTH, JSON_TYPE, startSurfaceB, type SurfaceB } from "./support.js";

let b: SurfaceB;
beforeAll(async () => {
  b = await startSurfaceB();
});
afterAll(async () => {
  await b.close();
});

const LIMIT = 65_536;
const TOO_LARGE = { status: 413, body: { error: "Request body too large" } };

/** A `POST /transactions` body of exactly `bytes` bytes: its open `metadata` section is padded with ASCII. */
function paddedTransaction(bytes: number, id: string = `pad-${randomUUID()}`): string {
  const body = (pad: string) =>
    JSON.stringify({
      businessTransactionId: id,
      metadata: { pad },
      policy: { name: "conformance.transfer", version: "1.0.0" },
      signals: TRANSFER_SIGNALS.approved,
    });
  const text = body("x".repeat(bytes - Buffer.byteLength(body(""))));
  expect(Buffer.byteLength(text)).toBe(bytes);
  return text;
}

describe("content-length bodies", () => {
  it("65,536 bytes are accepted and executed; 65,537 are 413 and nothing is stored", async () => {
    expect((await b.call("POST", "/transactions", paddedTransaction(LIMIT))).status).toBe(201);
    const r = await b.call("POST", "/transactions", paddedTransaction(LIMIT + 1, "pad-over"));
    expect({ status: r.status, body: r.body }).toEqual(TOO_LARGE);
    expect((await b.call("GET", "/transactions/pad-over")).status).toBe(404);
  });

  it.each(["/execute", "/transactions", "/verify", "/receipt", "/replay", "/policies/validate"])(
    "POST %s: 65,537 bytes are 413",
    async (path) => {
      const r = await b.call("POST", path, paddedTransaction(LIMIT + 1));
      expect({ status: r.status, body: r.body }).toEqual(TOO_LARGE);
    },
  );

  it("POST /execute: an oversized body is 413 whatever its businessTransactionId", async () => {
    const r = await b.call("POST", "/execute", paddedTransaction(LIMIT + 1, "not-a-uuid"));
    expect({ status: r.status, body: r.body }).toEqual(TOO_LARGE);
  });
});

describe("chunked bodies (no content-length)", () => {
  const headers = { ...AUTH, ...JSON_TYPE };

  it("65,536 bytes in 1 KB chunks are accepted", async () => {
    const r = await postChunked(b.url, "/transactions", chunksOf(paddedTransaction(LIMIT), 1024), headers);
    expect(r.status).toBe(201);
  });

  it("65,537 bytes in 1 KB chunks are 413", async () => {
    const r = await postChunked(b.url, "/execute", chunksOf(paddedTransaction(LIMIT + 1), 1024), headers);
    expect({ status: r.status, body: JSON.parse(r.text) as unknown }).toEqual(TOO_LARGE);
  });
});
