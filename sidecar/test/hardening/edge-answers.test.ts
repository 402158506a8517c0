/**
 * Every answer in the error table's shape, also for what goes wrong below the routes: Node and fastify
 * answered these with their own bodies (`{"error":"Bad Request","message":"Client Error","statusCode":400}`), an empty
 * body (417), or by dropping the connection (CONNECT).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startE2eSidecar, type E2eSidecar } from "../support/e2e.js";
import { parseRaw, rawRequest } from "../support/raw-http.js";

const body = (error: string): string => JSON.stringify({ error });

describe("answers below the routes", () => {
  let s: E2eSidecar;
  beforeAll(async () => {
    s = await startE2eSidecar({ SERVICE_HEADERS_TIMEOUT_MS: "500", SERVICE_REQUEST_TIMEOUT_MS: "1000" });
  });
  afterAll(async () => {
    await s.close();
  });

  it.each([
    ["a bare LF ending a header line", "GET /health HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n", 400, "Invalid request"],
    ["a Content-Length that is not a number", "POST /evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n", 400, "Invalid request"],
    [
      "two different Content-Lengths",
      "POST /evaluate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
      400,
      "Invalid request",
    ],
    ["a malformed request line", "GET\r\n\r\n", 400, "Invalid request"],
    [
      "headers larger than 16 KB",
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      431,
      "request headers too large",
    ],
    [
      "an Expect other than 100-continue",
      "GET /health HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n",
      417,
      "expectation failed: only 100-continue is supported",
    ],
    ["CONNECT", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 405, "method not allowed"],
  ])("%s: %i in the table's shape", async (_name, request, status, error) => {
    const answer = await rawRequest(s.url, request);
    expect(parseRaw(answer)).toEqual({ status, body: body(error) });
    expect(answer.toLowerCase()).toContain("content-type: application/json");
  });

  it("headers that arrive too slowly: 408 in the table's shape, and the connection is closed", async () => {
    const started = performance.now();
    const answer = await rawRequest(s.url, "GET /health HTTP/1.1\r\nHost: x\r\n");
    expect(parseRaw(answer)).toEqual({ status: 408, body: body("request timeout") });
    // SERVICE_HEADERS_TIMEOUT_MS 500, checked every second.
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});
