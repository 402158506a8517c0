/**
 * `POST /transactions` (the body used as given: no UUID check, no forced status, sections optional, yet bounded),
 * `GET /transactions` (pages of stored transactions, oldest first) and `GET /transactions/:id`, on a real listener.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import type { BusinessTransaction, TrustRecord } from "@writ/sidecar";
import { RECORD_ID_PATTERN } from "@writ/wire";
import { businessTransaction, startSurfaceB, type ErrorReply, type SurfaceB } from "./support.js";

interface Page {
  readonly items: BusinessTransaction[];
  readonly page: number;
  readonly pageSize: number;
  readonly total: number;
}

const POLICY = { name: "conformance.transfer", version: "1.0.0" } as const;
const answer = (r: { status: number; body: unknown }) => ({ status: r.status, body: r.body });

describe("POST /transactions", () => {
  let b: SurfaceB;
  beforeAll(async () => {
    b = await startSurfaceB();
  });
  afterAll(async () => {
    await b.close();
  });
  const submit = <T = TrustRecord>(body: unknown) => b.call<T>("POST", "/transactions", body);

  it("executes a complete transaction and answers 201 with the trust record; status and createdAt as given", async () => {
    const sent = businessTransaction({ status: "SUBMITTED", createdAt: "2026-03-01T09:59:00Z" });
    const r = await submit(sent);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ ...sent, execution: { status: "approved" }, verification: { status: "VERIFIED" } });
    expect(r.body.receipt.trustRecordHash).toBe(r.body.trustRecordHash);
  });

  it("accepts an id that is not a UUID and a body without the descriptive sections; status defaults to SUBMITTED", async () => {
    const r = await submit({ businessTransactionId: "order-42.a_b~c:d", policy: POLICY, signals: TRANSFER_SIGNALS.pending });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      businessTransactionId: "order-42.a_b~c:d",
      status: "SUBMITTED",
      execution: { status: "pending_override" },
    });
    expect(Date.parse(r.body.createdAt)).not.toBeNaN();
    expect((await b.call("GET", "/transactions/order-42.a_b~c:d")).body).toEqual({
      businessTransactionId: "order-42.a_b~c:d",
      policy: POLICY,
      signals: TRANSFER_SIGNALS.pending,
      status: "SUBMITTED",
      createdAt: r.body.createdAt,
    });
  });

  it("keeps sections as given, members the spec does not name included", async () => {
    const metadata = { correlationId: 7, tags: ["a", "b"], nested: { deep: true } };
    const r = await submit({
      businessTransactionId: `free-${randomUUID()}`,
      metadata,
      policy: POLICY,
      signals: TRANSFER_SIGNALS.approved,
      status: "ANY STATUS",
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ metadata, status: "ANY STATUS" });
  });

  it("keeps a member named __proto__ as data, through signing, storage and verification", async () => {
    const id = `proto-${randomUUID()}`;
    const r = await submit(
      `{"businessTransactionId":"${id}","metadata":{"__proto__":{"admin":true}},"policy":{"name":"conformance.transfer","version":"1.0.0"},"signals":${JSON.stringify(TRANSFER_SIGNALS.approved)}}`,
    );
    expect(r.status).toBe(201);
    expect(Object.hasOwn(r.body.metadata ?? {}, "__proto__")).toBe(true);
    expect((await b.call<{ status: string }>("POST", "/verify", { businessTransactionId: id })).body.status).toBe("VERIFIED");
  });

  it.each([
    [
      "missing businessTransactionId",
      { policy: POLICY, signals: TRANSFER_SIGNALS.approved },
      "body must have required property 'businessTransactionId'",
    ],
    ["missing policy", { businessTransactionId: "x1", signals: TRANSFER_SIGNALS.approved }, "body must have required property 'policy'"],
    ["missing signals", { businessTransactionId: "x2", policy: POLICY }, "body must have required property 'signals'"],
  ])("%s is 400", async (_name, body, error) => {
    expect(answer(await submit(body))).toEqual({ status: 400, body: { error } });
  });

  it.each([
    ["an empty id", { businessTransactionId: "" }],
    ["an id of 65 characters", { businessTransactionId: "a".repeat(65) }],
    ["an id with a slash", { businessTransactionId: "a/b" }],
    ["an id with a blank", { businessTransactionId: "a b" }],
    ["an id with non-ASCII", { businessTransactionId: "zahlung-ü" }],
    ["an id that is not a string", { businessTransactionId: 42 }],
    ["an unknown top-level member", { execution: { status: "approved" } }],
    ["a section that is not an object", { intent: "pay" }],
    ["a status that is not a string", { status: 1 }],
    ["a status over 64 characters", { status: "S".repeat(65) }],
    ["a createdAt that is not a string", { createdAt: 0 }],
  ])("%s is 400 Invalid request", async (_name, change) => {
    const r = await submit<ErrorReply>({
      businessTransactionId: `ok-${randomUUID()}`,
      policy: POLICY,
      signals: TRANSFER_SIGNALS.approved,
      ...change,
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("Invalid request");
  });

  it("an id at the 64-character bound is stored and reachable", async () => {
    const id = `b${"0".repeat(63)}`;
    expect((await submit({ businessTransactionId: id, policy: POLICY, signals: TRANSFER_SIGNALS.approved })).status).toBe(201);
    expect((await b.call("GET", `/transactions/${id}`)).status).toBe(200);
  });

  it("deeply nested input is bounded by the strict parser (depth 64): 400, no crash", async () => {
    const deep = `${"[".repeat(100)}${"]".repeat(100)}`;
    const r = await submit(
      `{"businessTransactionId":"deep-1","policy":{"name":"conformance.transfer","version":"1.0.0"},"signals":{},"metadata":{"x":${deep}}}`,
    );
    expect(r.status).toBe(400);
    expect((await b.call("GET", "/health")).status).toBe(200);
  });

  it("refusals of the evaluation are the error table's (422 signals, 404 policy) and store nothing", async () => {
    const bad = await submit<ErrorReply>({ businessTransactionId: "refused-1", policy: POLICY, signals: { amount: 1 } });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe("Signal validation failed");
    const missing = await submit({ businessTransactionId: "refused-2", policy: { name: "no.such", version: "1.0.0" }, signals: {} });
    expect(answer(missing)).toEqual({ status: 404, body: { error: "Policy not found" } });
    expect((await b.call("GET", "/transactions/refused-1")).status).toBe(404);
    expect((await b.call("GET", "/transactions/refused-2")).status).toBe(404);
  });

  it("an id used before (by /execute or /transactions) is 422 INV-013", async () => {
    const executed = businessTransaction();
    expect((await b.call("POST", "/execute", executed)).status).toBe(200);
    const r = await submit({ businessTransactionId: executed.businessTransactionId, policy: POLICY, signals: TRANSFER_SIGNALS.approved });
    expect(answer(r)).toEqual({ status: 422, body: { error: "[INV-013@replay] execution already consumed: use a new executionId" } });
  });
});

describe("GET /transactions and GET /transactions/:id", () => {
  let b: SurfaceB;
  const ids: string[] = [];
  beforeAll(async () => {
    b = await startSurfaceB();
    // 25 stored transactions, in this order; two refused ones in between are not listed.
    for (let i = 0; i < 25; i++) {
      const body = businessTransaction();
      ids.push(body.businessTransactionId as string);
      expect((await b.call("POST", "/execute", body)).status).toBe(200);
      if (i % 12 === 0) expect((await b.call("POST", "/execute", businessTransaction({ signals: {} }))).status).toBe(422);
    }
  });
  afterAll(async () => {
    await b.close();
  });
  const list = (query: string) => b.call<Page>("GET", `/transactions${query}`);

  it("defaults to page 1 of 20, oldest first, with the total", async () => {
    const r = await list("");
    expect(r.status).toBe(200);
    expect({ ...r.body, items: r.body.items.map((t) => t.businessTransactionId) }).toEqual({
      items: ids.slice(0, 20),
      page: 1,
      pageSize: 20,
      total: r.body.total,
    });
    expect(r.body.total).toBeGreaterThanOrEqual(25);
  });

  it("pages through every transaction", async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 9; page++) {
      const r = await list(`?page=${page}&pageSize=3`);
      expect(r.body).toMatchObject({ page, pageSize: 3 });
      seen.push(...r.body.items.map((t) => t.businessTransactionId));
    }
    expect(seen.slice(0, 25)).toEqual(ids);
  });

  it("concurrent executions each get their own place in the listing", async () => {
    const bodies = Array.from({ length: 30 }, () => businessTransaction());
    expect(new Set((await Promise.all(bodies.map((body) => b.call("POST", "/execute", body)))).map((r) => r.status))).toEqual(
      new Set([200]),
    );
    const listed = (await list("?page=1&pageSize=100")).body;
    expect(listed.total).toBe(55);
    expect(listed.items.slice(0, 25).map((t) => t.businessTransactionId)).toEqual(ids);
    expect(new Set(listed.items.slice(25).map((t) => t.businessTransactionId))).toEqual(
      new Set(bodies.map((body) => body.businessTransactionId)),
    );
  });

  it("a page past the end is empty; pageSize 100 is the maximum", async () => {
    expect((await list("?page=2&pageSize=100")).body).toEqual({ items: [], page: 2, pageSize: 100, total: 55 });
    expect((await list("?pageSize=100")).body.items).toHaveLength(55);
    expect((await list("?page=1000000")).body.items).toEqual([]);
  });

  it("items are Business Transactions: the spec 2.13 members, nothing the pipeline appended", async () => {
    const [first] = (await list("?pageSize=1")).body.items;
    expect(Object.keys(first ?? {}).sort()).toEqual([
      "authority",
      "authorization",
      "businessTransactionId",
      "createdAt",
      "intent",
      "metadata",
      "policy",
      "signals",
      "status",
    ]);
    expect((await b.call("GET", `/transactions/${ids[0]}`)).body).toEqual(first);
  });

  it.each([
    ["page=0", "querystring/page must be an integer between 1 and 1000000"],
    ["page=-1", "querystring/page must be an integer between 1 and 1000000"],
    ["page=1.5", "querystring/page must be an integer between 1 and 1000000"],
    ["page=abc", "querystring/page must be an integer between 1 and 1000000"],
    ["page=", "querystring/page must be an integer between 1 and 1000000"],
    ["page=1000001", "querystring/page must be an integer between 1 and 1000000"],
    ["pageSize=0", "querystring/pageSize must be an integer between 1 and 100"],
    ["pageSize=101", "querystring/pageSize must be an integer between 1 and 100"],
    ["pageSize=1e1", "querystring/pageSize must be an integer between 1 and 100"],
    ["page=1&page=2", "querystring/page must be given once"],
    ["limit=5", "querystring/limit is not a known parameter; known: page, pageSize"],
  ])("?%s is 400", async (query, message) => {
    const r = await list(`?${query}`);
    expect({ status: r.status, body: r.body }).toEqual({
      status: 400,
      body: { error: "Invalid request", details: [{ path: "querystring", message }] },
    });
  });

  it.each(["no-such-id", randomUUID(), "x".repeat(64)])("GET /transactions/%s is 404 when unknown", async (id) => {
    expect(answer(await b.call("GET", `/transactions/${id}`))).toEqual({ status: 404, body: { error: "transaction not found" } });
  });

  it.each([
    ["x".repeat(65), "must NOT have more than 64 characters"],
    ["%F0%9F%92%A9", `must match pattern "${RECORD_ID_PATTERN}"`],
    ["a%2Fb", `must match pattern "${RECORD_ID_PATTERN}"`],
  ])("GET /transactions/%s is 400: no record can be stored under it", async (id, message) => {
    expect(answer(await b.call("GET", `/transactions/${id}`))).toEqual({
      status: 400,
      body: { error: "Invalid request", details: [{ path: "params/id", message }] },
    });
  });
});
