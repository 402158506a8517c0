/**
 * The clients' HTTP behaviour that a healthy sidecar does not show: retries (spec 7: 429 and 5xx with backoff that
 * honours `retry-after` and `reset`; never 400, 401, 413 or a replay 422), timeouts, cancellation, network failures
 * (not wrapped), and error bodies that are not JSON. A scripted node:http server answers and counts the attempts.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_RETRY, GovernanceClient, WritApiError, WritError } from "@writ/sdk";
import { retryDelay } from "../src/client/retry.js";

interface Scripted {
  readonly status: number;
  readonly body?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Never answer (for timeouts). */
  readonly hang?: boolean;
}

let server: Server;
let url: string;
let script: Scripted[] = [];
let seen: { method: string; url: string; headers: IncomingMessage["headers"] }[] = [];
const clients: GovernanceClient[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    req.resume();
    const next = script.shift() ?? { status: 200, body: "{}" };
    if (next.hang) return;
    res.writeHead(next.status, { "content-type": "application/json", ...next.headers }).end(next.body ?? "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  script = [];
  seen = [];
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function client(options: Partial<ConstructorParameters<typeof GovernanceClient>[0]> = {}): GovernanceClient {
  const c = new GovernanceClient({ baseUrl: url, apiKey: "k", retry: { baseDelayMs: 1 }, ...options });
  clients.push(c);
  return c;
}

const error = (status: number, message: string, extra: object = {}): Scripted => ({
  status,
  body: JSON.stringify({ error: message, ...extra }),
});
const OK: Scripted = { status: 200, body: JSON.stringify({ capabilities: [] }) };

describe("retryDelay", () => {
  const policy = { ...DEFAULT_RETRY };
  const now = Date.parse("2026-01-01T00:00:00Z");
  const answer = (status: number, retryAfter?: string, body: unknown = null) => ({ status, retryAfter, body });

  it.each([400, 401, 403, 404, 409, 413, 422])("never retries a %i", (status) => {
    expect(retryDelay(policy, 0, answer(status, "1"), now)).toBeNull();
  });

  it("waits what retry-after says, in seconds or as an HTTP date", () => {
    expect(retryDelay(policy, 0, answer(429, "3"), now)).toBe(3000);
    expect(retryDelay(policy, 0, answer(503, new Date(now + 4000).toUTCString()), now)).toBe(4000);
  });

  it("waits until a 429's reset when there is no retry-after", () => {
    expect(retryDelay(policy, 0, answer(429, undefined, { error: "Rate limit exceeded", reset: now / 1000 + 2 }), now)).toBe(2000);
  });

  it("does not wait longer than maxDelayMs: the error is thrown at once", () => {
    expect(retryDelay(policy, 0, answer(429, "60"), now)).toBeNull();
  });

  it("backs off exponentially, half fixed and half jitter, within maxDelayMs", () => {
    expect(retryDelay(policy, 0, answer(500), now, () => 0)).toBe(100);
    expect(retryDelay(policy, 1, answer(500), now, () => 1)).toBe(400);
    expect(retryDelay({ ...policy, retries: 10 }, 9, answer(502), now, () => 1)).toBe(10_000);
  });

  it("stops after `retries` further attempts", () => {
    expect(retryDelay(policy, 2, answer(503), now)).toBeNull();
  });
});

describe("retries on the wire", () => {
  it("retries 5xx and answers the success that follows", async () => {
    script = [error(503, "Governed execution runtime not configured"), error(500, "internal error"), OK];
    expect(await client().runtimeCapabilities()).toEqual({ capabilities: [] });
    expect(seen).toHaveLength(3);
  });

  it("throws the last error once the retries are spent", async () => {
    script = [error(500, "Evaluation failed"), error(500, "Evaluation failed"), error(500, "Evaluation failed")];
    await expect(client().runtimeCapabilities()).rejects.toMatchObject({ status: 500, message: "Evaluation failed" });
    expect(seen).toHaveLength(3);
  });

  it("honours retry-after on a 429", async () => {
    script = [error(429, "Rate limit exceeded", { limit: 100, remaining: 0 }), OK];
    script[0] = { ...script[0]!, headers: { "retry-after": "1" } };
    const started = Date.now();
    await client().runtimeCapabilities();
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(seen).toHaveLength(2);
  });

  it("honours the body's reset on a 429 without retry-after", async () => {
    script = [error(429, "Rate limit exceeded", { limit: 100, remaining: 0, reset: Math.floor(Date.now() / 1000) }), OK];
    await client().runtimeCapabilities();
    expect(seen).toHaveLength(2);
  });

  it("throws a 429 at once when the window resets later than maxDelayMs", async () => {
    script = [{ ...error(429, "Rate limit exceeded"), headers: { "retry-after": "60" } }];
    await expect(client().runtimeCapabilities()).rejects.toMatchObject({ status: 429 });
    expect(seen).toHaveLength(1);
  });

  it.each([
    [400, "body must have required property 'executionId'"],
    [401, "Unauthorized"],
    [413, "Request body too large"],
    [422, "[INV-013@replay] execution already consumed: use a new executionId"],
  ])("never retries a %i", async (status, message) => {
    script = [error(status, message), OK];
    await expect(client().runtimeCapabilities()).rejects.toMatchObject({ status, message });
    expect(seen).toHaveLength(1);
  });

  it("retries: 0 turns retries off", async () => {
    script = [error(503, "Governed execution runtime not configured"), OK];
    await expect(client({ retry: { retries: 0 } }).runtimeCapabilities()).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
  });
});

describe("requests", () => {
  it("keep the base URL's path, send the Bearer key, and a JSON content type with a body only", async () => {
    script = [OK, OK];
    const c = client({ baseUrl: `${url}/writ/` });
    await c.health();
    await c.dryRun({ policyId: "p", policyVersion: "1.0.0", signals: {} });
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(["GET /writ/health", "POST /writ/evaluate"]);
    expect(seen.map((r) => r.headers.authorization)).toEqual(["Bearer k", "Bearer k"]);
    expect(seen.map((r) => r.headers["content-type"])).toEqual([undefined, "application/json"]);
  });

  it("encode path parameters and audit queries", async () => {
    script = [OK, { status: 200, body: "[]" }];
    const c = client();
    await c.policySchema("a/b", "1.0.0");
    await c.auditDecisions({ limit: 5, from: new Date("2026-01-01T00:00:00Z") });
    expect(seen.map((r) => r.url)).toEqual([
      "/policies/a%2Fb/versions/1.0.0/schema",
      "/audit/decisions?limit=5&from=2026-01-01T00%3A00%3A00.000Z",
    ]);
  });

  it("an error body that is not JSON is kept as text", async () => {
    script = [{ status: 502, body: "<html>bad gateway</html>", headers: { "content-type": "text/html" } }];
    const e = await client({ retry: { retries: 0 } })
      .health()
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WritApiError);
    expect(e).toMatchObject({ status: 502, message: "HTTP 502 without an error body", body: "<html>bad gateway</html>" });
    expect(e).not.toHaveProperty("code");
  });
});

describe("failures that are not wrapped", () => {
  it("a timeout rejects with the abort's TimeoutError, and is not retried", async () => {
    script = [{ status: 200, hang: true }];
    const e = await client({ timeoutMs: 100 })
      .health()
      .catch((x: unknown) => x);
    expect(e).not.toBeInstanceOf(WritError);
    expect(e).toMatchObject({ name: "TimeoutError" });
    expect(seen).toHaveLength(1);
  });

  it("a per-call timeout overrides the client's", async () => {
    script = [{ status: 200, hang: true }];
    await expect(client({ timeoutMs: 60_000 }).health({ timeoutMs: 50 })).rejects.toMatchObject({ name: "TimeoutError" });
  });

  it("a caller's signal cancels the request, and the wait before a retry", async () => {
    script = [{ ...error(503, "busy"), headers: { "retry-after": "5" } }];
    const controller = new AbortController();
    const pending = client().health({ signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).toHaveLength(1);
  });

  it("a refused connection is the network's error", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const e = await client({ baseUrl: `http://127.0.0.1:${port}` })
      .health()
      .catch((x: unknown) => x);
    expect(e).not.toBeInstanceOf(WritError);
    expect(e).toMatchObject({ code: "ECONNREFUSED" });
  });

  it("a base URL that is not http(s) is refused when the client is made", () => {
    expect(() => new GovernanceClient({ baseUrl: "ftp://example.com", apiKey: "k" })).toThrow(TypeError);
  });
});
