/**
 * A decision record against its attestation and against the filter fields its store keeps for queries
 * (audit-log/decision-agreement.ts): every combination of status, verdict and policy, agreeing or not.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decisionDisagreement, filterFieldsOf, indexedDisagreement } from "../../src/audit-log/decision-agreement.js";

const STATUSES = ["approved", "pending_override", "rejected"] as const;
const VERDICT = { approved: "approve", pending_override: "escalate", rejected: "reject" } as const;

/** A record with a structurally complete attestation of the legacy shape (flat provenance); signatures are not read here. */
function record(status: (typeof STATUSES)[number], policyId: string, executionId = "exec-1") {
  const fields = ["execution_fingerprint", "policyVersion", "schemaVersion", "runtimeVersion", "runtimeHash", "actionType", "issuedAt"];
  const provenance = ["execution_state", "bundleHash", "manifestHash", "trustRootVersion", "signerKeyId", "signature"];
  return {
    executionId,
    status,
    attestation: {
      ...Object.fromEntries([...fields, ...provenance].map((name) => [name, "x"])),
      executionId,
      policyId,
      decision: { action: VERDICT[status] },
    },
  };
}

describe("a decision record and its attestation", () => {
  it("agree exactly when the executionId is the attestation's and the status is its verdict's", () => {
    fc.assert(
      fc.property(fc.constantFrom(...STATUSES), fc.constantFrom(...STATUSES), fc.boolean(), (signed, stated, sameId) => {
        const r = { ...record(signed, "p"), status: stated, executionId: sameId ? "exec-1" : "exec-2" };
        const why = decisionDisagreement(r);
        if (!sameId) expect(why).toBe("its executionId is not its attestation's");
        else if (signed !== stated) expect(why).toBe(`its status is not its attestation's verdict (${signed})`);
        else expect(why).toBeNull();
      }),
    );
  });

  it("disagree when the attestation is missing or not an object", () => {
    for (const attestation of [undefined, null, "x", 1])
      expect(decisionDisagreement({ executionId: "e", status: "approved", attestation })).not.toBeNull();
  });
});

describe("the filter fields a store keeps beside a record", () => {
  it("are the record's status and its attestation's policy", () => {
    expect(filterFieldsOf(record("pending_override", "payments"))).toEqual({ status: "pending_override", policyId: "payments" });
    expect(filterFieldsOf({})).toEqual({ status: null, policyId: null });
  });

  it("agree with the record exactly when both fields are its own", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...STATUSES),
        fc.constantFrom(...STATUSES, null),
        fc.string({ maxLength: 8 }),
        fc.option(fc.string({ maxLength: 8 })),
        (status, keptStatus, policyId, keptPolicy) => {
          const why = indexedDisagreement({ status: keptStatus, policyId: keptPolicy }, record(status, policyId));
          if (keptStatus === status && keptPolicy === policyId) expect(why).toBeNull();
          else
            expect(why).toMatch(
              /^its store keeps it for filtered queries as status .* and policy .*: the store was edited around the log$/,
            );
        },
      ),
    );
  });

  it("malformed (not an object) never agree", () => {
    for (const kept of [null, "approved", 3])
      expect(indexedDisagreement(kept, record("approved", "p"))).toBe("its store's filter fields are malformed");
  });
});
