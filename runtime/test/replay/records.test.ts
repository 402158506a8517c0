/**
 * INVARIANT (a record's text is its body): the authorizer hands engines a decision record's JSON text made around the
 * attestation's own (`decisionRecordJson`); it must be the body's serialization, member for member, whatever the values.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decisionRecordJson, recordJson, type DecisionAuditRecord, type TransitionRecord } from "../../src/replay/records.js";

// Strings with what JSON escapes: quotes, backslashes, controls, non-ASCII and astral characters.
const text = fc.string({ unit: "binary", maxLength: 16 });
const json = fc.jsonValue({ maxDepth: 3 });

const body: fc.Arbitrary<DecisionAuditRecord> = fc.record(
  {
    executionId: text,
    endpoint: fc.constantFrom("evaluate", "execute"),
    status: fc.constantFrom("approved", "pending_override", "rejected"),
    ruleMatched: text,
    attestation: fc.dictionary(text, json, { maxKeys: 5 }) as unknown as fc.Arbitrary<DecisionAuditRecord["attestation"]>,
    signalProvenance: fc.dictionary(text, json, { maxKeys: 3 }),
    recordedAt: text,
  },
  { requiredKeys: ["executionId", "endpoint", "status", "ruleMatched", "attestation", "recordedAt"] },
);

describe("decisionRecordJson", () => {
  it("is JSON.stringify of the body when given JSON.stringify of its attestation, with or without signalProvenance", () => {
    fc.assert(
      fc.property(body, (b) => {
        expect(decisionRecordJson(b, JSON.stringify(b.attestation))).toBe(JSON.stringify(b));
      }),
      { numRuns: 1000 },
    );
  });

  it("parses to the body whatever text of the attestation it is given", () => {
    fc.assert(
      fc.property(body, (b) => {
        const reordered = JSON.stringify(Object.fromEntries(Object.entries(b.attestation).reverse()));
        expect(JSON.parse(decisionRecordJson(b, reordered))).toEqual(JSON.parse(JSON.stringify(b)));
      }),
      { numRuns: 300 },
    );
  });
});

describe("recordJson", () => {
  it("is the text a record came with, else its body serialized", () => {
    fc.assert(
      fc.property(body, (b) => {
        const made = decisionRecordJson(b, JSON.stringify(b.attestation));
        const withText: TransitionRecord = { kind: "decision", body: b, json: made };
        const without: TransitionRecord = { kind: "decision", body: b };
        expect(recordJson(withText)).toBe(made);
        expect(recordJson(without)).toBe(JSON.stringify(b));
      }),
      { numRuns: 100 },
    );
  });
});
