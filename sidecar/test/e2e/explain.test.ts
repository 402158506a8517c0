/**
 * The dry run's explanation (docs/sidecar.md, "Explanations"): `?explain=true` on `POST /evaluate` variant 2 and
 * `POST /simulate` adds `explanation`, computed by the runtime's `explain` from the bundle served; without it the
 * answer is exactly the spec's. Variant 1 (signed) is unchanged by the parameter.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { TRANSFER, answer, startE2eSidecar, uid, type E2eSidecar } from "../support/e2e.js";

let s: E2eSidecar;
beforeAll(async () => {
  s = await startE2eSidecar();
});
afterAll(() => s.close());

const dryBody = { ...TRANSFER, signals: TRANSFER_SIGNALS.approved };
/** conformance.transfer for the approved signals: the third rule decides; `reference` is optional and absent. */
const EXPLANATION = {
  rules: [
    {
      rule: "risk_too_high",
      verdict: "reject",
      reason: "risk too high",
      result: "false",
      condition: {
        expr: "risk_score > 80",
        value: false,
        operands: [
          { expr: "risk_score", value: 10 },
          { expr: "80", value: 80 },
        ],
      },
    },
    {
      rule: "large_transfer",
      verdict: "escalate",
      reason: "large transfer requires approval",
      result: "false",
      condition: {
        expr: "amount > 10000",
        value: false,
        operands: [
          { expr: "amount", value: 250 },
          { expr: "10000", value: 10000 },
        ],
      },
    },
    {
      rule: "verified_customer",
      verdict: "approve",
      reason: "verified customer",
      result: "true",
      condition: { expr: "kyc_verified", value: true },
    },
  ],
  otherwise: { verdict: "reject", reason: "customer not verified" },
};

describe("?explain=true", () => {
  it("the dry run answers the spec's members, plus `explanation` only when asked", async () => {
    const plain = await s.call("POST", "/evaluate", dryBody);
    expect(answer(plain)).toEqual({
      status: 200,
      body: { wouldDecide: "approved", ruleMatched: "verified_customer", reason: "verified customer", signalsValidated: true },
    });
    expect(answer(await s.call("POST", "/evaluate?explain=false", dryBody))).toEqual(answer(plain));
    const explained = await s.call("POST", "/evaluate?explain=true", dryBody);
    expect(answer(explained)).toEqual({ status: 200, body: { ...(plain.body as object), explanation: EXPLANATION } });
  });

  it("/simulate answers `explanation` only when asked, beside its own members", async () => {
    const plain = await s.call<Record<string, unknown>>("POST", "/simulate", dryBody);
    expect(plain.status).toBe(200);
    expect(plain.body).not.toHaveProperty("explanation");
    const explained = await s.call<Record<string, unknown>>("POST", "/simulate?explain=true", dryBody);
    const { attestationPreview: _p, ...rest } = plain.body;
    expect(explained.body).toMatchObject({ ...rest, explanation: EXPLANATION });
  });

  it("an unknown signal is unknown in the explanation, and the decision still follows the first true rule", async () => {
    const r = await s.call<{ explanation: typeof EXPLANATION }>("POST", "/evaluate?explain=true", {
      ...TRANSFER,
      signals: TRANSFER_SIGNALS.pending,
    });
    expect(r.body.explanation.rules.map((x) => x.result)).toEqual(["false", "true", "true"]);
    expect(r.body).toMatchObject({ wouldDecide: "pending_override", ruleMatched: "large_transfer" });
  });

  it.each(["yes", "1", "TRUE", "true&explain=true"])("explain=%s is a 400 naming the parameter", async (value) => {
    expect(answer(await s.call("POST", `/evaluate?explain=${value}`, dryBody))).toEqual({
      status: 400,
      body: { error: "Invalid request", details: [{ path: "querystring/explain", message: "must be `true` or `false`, given once" }] },
    });
  });

  it("variant 1 signs the spec's answer whatever the parameter", async () => {
    const r = await s.call<Record<string, unknown>>("POST", "/evaluate?explain=true", {
      executionId: uid("ev"),
      ...TRANSFER,
      verifiedSignals: TRANSFER_SIGNALS.approved,
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["attestation", "requires_override", "status"]);
  });
});
