/**
 * Issue 39's decisions (conformance/vectors/decisions.json) through the embedded authorizer, which decides exactly as
 * the sidecar does: the exact verdict, the VAL codes, or the fault's coded 422 as a WritApiError, with nothing
 * consumed (the executionId then decides another request). Signals are parsed from each vector's JSON text by the
 * strict parser, as an application reading a request body would, so a number with more digits than a double holds is
 * refused as the sidecar refuses it.
 */
import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { generateSigningKeyPair, parseStrictJson } from "@writ/runtime";
import { EmbeddedAuthorizer, MemoryReplayStore, WritApiError } from "@writ/sdk";
import { fixturePoliciesRoot, uid } from "./support.js";

interface Vector {
  readonly id: string;
  readonly policyId: string;
  readonly signals: string;
  /** The decision instant, for a policy that reads `now`: the embedded authorizer's clock shows it. */
  readonly now?: string;
  readonly expected:
    | { readonly outcome: "decided"; readonly verdict: "approve" | "escalate" | "reject"; readonly ruleMatched: string }
    | { readonly outcome: "invalid"; readonly codes: readonly string[] }
    | { readonly outcome: "fault"; readonly code: string; readonly rule: string; readonly error: string };
}

const VECTORS = (
  JSON.parse(readFileSync(new URL("../../conformance/vectors/decisions.json", import.meta.url), "utf8")) as { vectors: Vector[] }
).vectors;
const STATUS = { approve: "approved", escalate: "pending_override", reject: "rejected" } as const;

let embedded: EmbeddedAuthorizer;
/** What the clock shows: a vector's instant while it is decided, else the system's. */
let instant: Date | null = null;
beforeAll(async () => {
  embedded = new EmbeddedAuthorizer({
    policiesRoot: await fixturePoliciesRoot(),
    signingKeyPem: generateSigningKeyPair().privateKeyPem,
    store: new MemoryReplayStore(),
    now: () => instant ?? new Date(),
  });
});
afterAll(() => embedded.close());
afterEach(() => {
  instant = null;
});

const signalsOf = (v: Vector) => parseStrictJson(v.signals) as Record<string, unknown>;

async function refused(work: Promise<unknown>): Promise<WritApiError> {
  const e = await work.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(WritApiError);
  return e as WritApiError;
}

describe.each(VECTORS.map((v) => [v.id, v] as const))("%s", (_id, v) => {
  it("the dry run, /simulate and a signed evaluation, as the sidecar answers them", async () => {
    const request = { policyId: v.policyId, policyVersion: "1.0.0" };
    const executionId = uid("exact");
    instant = v.now === undefined ? null : new Date(v.now);
    // A policy that reads `now` says the instant; `issuedAt` is the same text.
    const now = v.now === undefined ? {} : { now: new Date(v.now).toISOString() };
    if (v.expected.outcome === "decided") {
      const dry = await embedded.dryRun({ ...request, signals: signalsOf(v) });
      expect(dry).toMatchObject({ wouldDecide: STATUS[v.expected.verdict], ruleMatched: v.expected.ruleMatched, ...now });
      if (v.now === undefined) expect(dry).not.toHaveProperty("now");
      expect(await embedded.simulate({ ...request, signals: signalsOf(v) })).toMatchObject({
        decision: { action: v.expected.verdict, ruleMatched: v.expected.ruleMatched },
        ...now,
        ...(v.now === undefined ? {} : { attestationPreview: { issuedAt: now.now } }),
      });
      const signed = await embedded.evaluate({ ...request, executionId, verifiedSignals: signalsOf(v) });
      expect(signed).toMatchObject({ status: STATUS[v.expected.verdict] });
      if (v.now !== undefined) expect(signed.attestation.issuedAt).toBe(now.now);
      return;
    }
    const signed = await refused(embedded.evaluate({ ...request, executionId, verifiedSignals: signalsOf(v) }));
    const dry = await refused(embedded.dryRun({ ...request, signals: signalsOf(v) }));
    for (const e of [signed, dry]) expect(e.status).toBe(422);
    if (v.expected.outcome === "invalid") {
      const details = (signed.details ?? []) as readonly { readonly code?: string }[];
      expect([...new Set(details.map((d) => d.code))].sort()).toEqual(v.expected.codes);
    } else {
      expect([signed.message, dry.message]).toEqual([v.expected.error, v.expected.error]);
      expect([signed.code, signed.context]).toEqual([v.expected.code, v.expected.rule]);
    }
    // Nothing was consumed: the same executionId decides a request of the same policy that decides.
    const sibling = VECTORS.find((o) => o.policyId === v.policyId && o.expected.outcome === "decided");
    if (sibling)
      expect(await embedded.evaluate({ ...request, executionId, verifiedSignals: signalsOf(sibling) })).toHaveProperty("attestation");
  });
});
