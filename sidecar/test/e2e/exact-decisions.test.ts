/**
 * Issue 39's decisions (conformance/vectors/decisions.json) on every route of the sidecar that decides: the `/evaluate`
 * dry run, `/evaluate` signed, `/simulate`, the legacy `/execute` and Surface B's `/execute`. Bodies are sent as JSON
 * text with each vector's signals as written, so a number with more digits than a double holds reaches the sidecar as
 * the client wrote it. An exact verdict is answered as the vector says; a refused signal with its VAL codes; a fault
 * with its coded 422, after which the same executionId (and businessTransactionId) still decides.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { businessTransaction, startSurfaceB, type SurfaceB } from "../surface-b/support.js";
import { API_KEY } from "../support/sidecar.js";

interface Vector {
  readonly id: string;
  readonly policyId: string;
  readonly signals: string;
  /** The decision instant, for a policy that reads `now`: the sidecar's clock shows it while the vector is decided. */
  readonly now?: string;
  readonly expected:
    | { readonly outcome: "decided"; readonly verdict: "approve" | "escalate" | "reject"; readonly ruleMatched: string }
    | { readonly outcome: "invalid"; readonly codes: readonly string[] }
    | { readonly outcome: "fault"; readonly code: string; readonly rule: string; readonly error: string };
}

const VECTORS = (
  JSON.parse(readFileSync(new URL("../../../conformance/vectors/decisions.json", import.meta.url), "utf8")) as { vectors: Vector[] }
).vectors;
const STATUS = { approve: "approved", escalate: "pending_override", reject: "rejected" } as const;
/** The legacy `/execute` answers the attestation's `execution_state` for what is not approved (spec 2.5). */
const LEGACY_STATUS = { approve: "approved", escalate: "pending_override", reject: "completed" } as const;

let b: SurfaceB;
beforeAll(async () => {
  b = await startSurfaceB();
});
afterAll(() => b.close());

/** POST to Surface A with `members` and the vector's signals, as JSON text. */
async function postA(path: string, members: Record<string, unknown>, signalsMember: string, v: Vector) {
  const head = JSON.stringify({ ...members, policyId: v.policyId, policyVersion: "1.0.0" }).slice(0, -1);
  const response = await fetch(`${b.running.urls.a!}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
    body: `${head},"${signalsMember}":${v.signals}}`,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** What every route answers a refusal with: the VAL codes of a 422 signal validation, or the fault's coded 422. */
function expectRefusal(answer: { status: number; body: Record<string, unknown> }, v: Vector, envelope: string): void {
  expect(answer.status).toBe(422);
  if (v.expected.outcome === "invalid") {
    expect(answer.body["error"]).toBe(envelope);
    expect([...new Set((answer.body["details"] as { code: string }[]).map((d) => d.code))].sort()).toEqual(v.expected.codes);
  } else if (v.expected.outcome === "fault") {
    expect(answer.body).toEqual({ error: v.expected.error });
    expect(v.expected.error.startsWith(`[${v.expected.code}@${v.expected.rule}] `)).toBe(true);
  }
}

/** A vector of the same policy that decides: what a freed executionId is used for after a fault. */
function decidingSibling(v: Vector): Vector | undefined {
  return VECTORS.find((o) => o.policyId === v.policyId && o.expected.outcome === "decided");
}

describe.each(VECTORS.map((v) => [v.id, v] as const))("%s", (_id, v) => {
  // The process's clock (Date alone: timers run as they do) shows the vector's instant, which the sidecar reads.
  const now = v.now === undefined ? {} : { now: new Date(v.now).toISOString() };
  beforeEach(() => {
    if (v.now === undefined) return;
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date(v.now));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("the dry run and /simulate", async () => {
    const dry = await postA("/evaluate", {}, "signals", v);
    const simulated = await postA("/simulate", {}, "signals", v);
    if (v.expected.outcome === "decided") {
      expect(dry).toMatchObject({
        status: 200,
        body: { wouldDecide: STATUS[v.expected.verdict], ruleMatched: v.expected.ruleMatched, ...now },
      });
      if (v.now === undefined) expect(dry.body).not.toHaveProperty("now");
      expect(simulated).toMatchObject({
        status: 200,
        body: {
          decision: { action: v.expected.verdict, ruleMatched: v.expected.ruleMatched },
          ...now,
          ...(v.now === undefined ? {} : { attestationPreview: { issuedAt: now.now } }),
        },
      });
    } else {
      expectRefusal(dry, v, "Signals validation failed");
      expectRefusal(simulated, v, "Signals validation failed");
    }
  });

  it("/evaluate signed and the legacy /execute; after a refusal the executionId still decides", async () => {
    for (const [path, member, envelope] of [
      ["/evaluate", "verifiedSignals", "Signal validation failed"],
      ["/execute", "signals", "Signals validation failed"],
    ] as const) {
      const executionId = `exact-${randomUUID()}`;
      const answer = await postA(path, { executionId }, member, v);
      if (v.expected.outcome === "decided") {
        const status = path === "/evaluate" ? STATUS[v.expected.verdict] : LEGACY_STATUS[v.expected.verdict];
        expect(answer).toMatchObject({ status: 200, body: { status } });
        // The signed decision's `issuedAt` is the instant its `now` read.
        if (v.now !== undefined) expect((answer.body["attestation"] as { issuedAt: string }).issuedAt).toBe(now.now);
        continue;
      }
      expectRefusal(answer, v, envelope);
      const sibling = decidingSibling(v);
      if (sibling) expect((await postA(path, { executionId }, member, sibling)).status).toBe(200);
    }
  });

  it("Surface B's /execute: a Trust Record, or the refusal with nothing stored", async () => {
    const transaction = businessTransaction({ policy: { name: v.policyId, version: "1.0.0" }, signals: "SIGNALS" });
    const text = (signals: string) => JSON.stringify(transaction).replace('"SIGNALS"', signals);
    const answer = await b.call<Record<string, unknown>>("POST", "/execute", text(v.signals));
    if (v.expected.outcome === "decided") {
      expect(answer).toMatchObject({ status: 200, body: { execution: { status: STATUS[v.expected.verdict] } } });
      return;
    }
    // Surface B evaluates as `/evaluate` with `verifiedSignals` does, in its wording.
    expectRefusal(answer as { status: number; body: Record<string, unknown> }, v, "Signal validation failed");
    expect((await b.call("GET", `/trust-records/${transaction.businessTransactionId}`)).status).toBe(404);
    const sibling = decidingSibling(v);
    if (sibling) expect((await b.call("POST", "/execute", text(sibling.signals))).status).toBe(200);
  });
});
