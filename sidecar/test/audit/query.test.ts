import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InclusionProofQuery, LogQuery, type TSchema } from "@writ/wire";
import {
  AUDIT_QUERY_LIMITS,
  QueryError,
  logQuery,
  logSizeParam,
  parseDecisionQuery,
  parseSecurityQuery,
  type RawQuery,
} from "../../src/surface-a/audit-query.js";

function refusal(parse: () => unknown): QueryError {
  try {
    parse();
  } catch (error) {
    if (error instanceof QueryError) return error;
    throw error;
  }
  throw new Error("expected a QueryError");
}

describe("parseDecisionQuery", () => {
  it("applies the defaults", () => {
    expect(parseDecisionQuery({})).toEqual({ limit: 50, offset: 0 });
    expect(AUDIT_QUERY_LIMITS).toEqual({ defaultLimit: 50, maxLimit: 500, maxOffset: 1_000_000 });
  });

  it("reads every parameter", () => {
    expect(
      parseDecisionQuery({
        limit: "10",
        offset: "20",
        policyId: "payments.eu-west",
        decision: "pending_override",
        from: "2025-03-10T00:00:00Z",
        to: "2025-03-10T02:00:00.5+02:00",
      }),
    ).toEqual({
      limit: 10,
      offset: 20,
      policyId: "payments.eu-west",
      decision: "pending_override",
      from: Date.UTC(2025, 2, 10),
      to: Date.UTC(2025, 2, 10) + 500,
    });
  });

  it("accepts the maximums and an empty-width range", () => {
    expect(parseDecisionQuery({ limit: "500", offset: "1000000", from: "2025-03-10T00:00:00Z", to: "2025-03-10T00:00:00Z" })).toMatchObject(
      {
        limit: 500,
        offset: 1_000_000,
        from: Date.UTC(2025, 2, 10),
        to: Date.UTC(2025, 2, 10),
      },
    );
  });

  it.each([
    [{ limit: "0" }, "querystring/limit must be an integer between 1 and 500"],
    [{ limit: "501" }, "querystring/limit must be an integer between 1 and 500"],
    [{ limit: "-1" }, "querystring/limit must be an integer between 1 and 500"],
    [{ limit: "1.5" }, "querystring/limit must be an integer between 1 and 500"],
    [{ limit: "1e2" }, "querystring/limit must be an integer between 1 and 500"],
    [{ limit: " 5" }, "querystring/limit must be an integer between 1 and 500"],
    [{ limit: "+5" }, "querystring/limit must be an integer between 1 and 500"],
    [{ limit: "" }, "querystring/limit must be an integer between 1 and 500"],
    [{ limit: "ten" }, "querystring/limit must be an integer between 1 and 500"],
    [{ limit: "99999999999999999999" }, "querystring/limit must be an integer between 1 and 500"],
    [{ offset: "1000001" }, "querystring/offset must be an integer between 0 and 1000000"],
    [{ offset: "-0" }, "querystring/offset must be an integer between 0 and 1000000"],
    [{ limit: ["1", "2"] }, "querystring/limit must be given once"],
    [{ policyId: "" }, 'querystring/policyId must match pattern "^[a-z0-9]+(?:[._-][a-z0-9]+)*$"'],
    [{ policyId: "Payments" }, 'querystring/policyId must match pattern "^[a-z0-9]+(?:[._-][a-z0-9]+)*$"'],
    [{ policyId: "a".repeat(129) }, "querystring/policyId must NOT have more than 128 characters"],
    [{ policyId: "é".repeat(129) }, "querystring/policyId must NOT have more than 128 characters"],
    [{ decision: "approve" }, "querystring/decision must be equal to one of the allowed values: approved, pending_override, rejected"],
    [{ decision: "" }, "querystring/decision must be equal to one of the allowed values: approved, pending_override, rejected"],
    [{ from: "2025-03-10" }, 'querystring/from must match format "date-time" (RFC 3339, e.g. 2025-01-31T00:00:00Z)'],
    [{ from: "2025-03-10T00:00:00" }, 'querystring/from must match format "date-time" (RFC 3339, e.g. 2025-01-31T00:00:00Z)'],
    [{ to: "2025-02-30T00:00:00Z" }, 'querystring/to must match format "date-time" (RFC 3339, e.g. 2025-01-31T00:00:00Z)'],
    [{ to: "1741564800000" }, 'querystring/to must match format "date-time" (RFC 3339, e.g. 2025-01-31T00:00:00Z)'],
    [{ from: `2025-03-10T00:00:00.${"1".repeat(44)}Z` }, "querystring/from must NOT have more than 64 characters"],
    [{ from: "2025-03-10T00:00:00.001Z", to: "2025-03-10T00:00:00Z" }, "querystring/from must not be later than querystring/to"],
    [{ sort: "asc" }, "querystring/sort is not a known parameter; known: limit, offset, policyId, decision, from, to"],
  ] as [RawQuery, string][])("refuses %j", (raw, message) => {
    const error = refusal(() => parseDecisionQuery(raw));
    expect(error.message).toBe(message);
    expect(error.statusCode).toBe(400);
    expect(error.name).toBe("QueryError");
  });

  it("takes a policy id of the longest the compiler allows, and refuses any longer value by its length, before its pattern", () => {
    expect(parseDecisionQuery({ policyId: "a".repeat(128) }).policyId).toBe("a".repeat(128));
    fc.assert(
      fc.property(fc.string({ unit: "binary", minLength: 129, maxLength: 5_000 }), (policyId) => {
        expect(refusal(() => parseDecisionQuery({ policyId })).message).toBe("querystring/policyId must NOT have more than 128 characters");
      }),
    );
  });

  it("reads every integer in range as itself, and refuses every other text", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: AUDIT_QUERY_LIMITS.maxOffset }), (n) => {
        expect(parseDecisionQuery({ offset: String(n) }).offset).toBe(n);
      }),
    );
    fc.assert(
      fc.property(
        fc.string().filter((s) => !/^\d+$/.test(s)),
        (s) => {
          expect(() => parseDecisionQuery({ limit: s })).toThrow(QueryError);
        },
      ),
    );
  });
});

describe("parseSecurityQuery", () => {
  it("applies the default limit and reads the range", () => {
    expect(parseSecurityQuery({})).toEqual({ limit: 50 });
    expect(parseSecurityQuery({ limit: "500", from: "2025-03-10T00:00:00Z", to: "2025-03-11T00:00:00Z" })).toEqual({
      limit: 500,
      from: Date.UTC(2025, 2, 10),
      to: Date.UTC(2025, 2, 11),
    });
  });

  it.each([
    [{ limit: "501" }, "querystring/limit must be an integer between 1 and 500"],
    [{ offset: "1" }, "querystring/offset is not a known parameter; known: limit, from, to"],
    [{ decision: "approved" }, "querystring/decision is not a known parameter; known: limit, from, to"],
    [{ from: "yesterday" }, 'querystring/from must match format "date-time" (RFC 3339, e.g. 2025-01-31T00:00:00Z)'],
    [{ from: "2025-03-11T00:00:00Z", to: "2025-03-10T00:00:00Z" }, "querystring/from must not be later than querystring/to"],
  ] as [RawQuery, string][])("refuses %j", (raw, message) => {
    expect(refusal(() => parseSecurityQuery(raw)).message).toBe(message);
  });
});

describe("logQuery", () => {
  it("reads `logId`, defaulting to this sidecar's log", () => {
    expect(logQuery({}, LogQuery, "own")).toBe("own");
    expect(logQuery({ logId: "sidecar-2" }, LogQuery, "own")).toBe("sidecar-2");
  });

  it.each([
    [{ logId: "x".repeat(129) }, LogQuery, "querystring/logId must NOT have more than 128 characters"],
    [{ logId: "a b" }, LogQuery, 'querystring/logId must match pattern "^[A-Za-z0-9._:-]{1,128}$"'],
    [{ logId: ["a", "b"] }, LogQuery, "querystring/logId must be given once"],
    [{ size: "1" }, LogQuery, "querystring/size is not a known parameter; known: logId"],
    [{ logId: "a" }, InclusionProofQuery, "querystring/logId is not a known parameter; known: executionId, size"],
  ] as [RawQuery, TSchema, string][])("refuses %j", (raw, query, message) => {
    expect(refusal(() => logQuery(raw, query, "own")).message).toBe(message);
  });
});

describe("logSizeParam", () => {
  it("reads a size in the path, and names the path parameter when it refuses one", () => {
    expect(logSizeParam({ size: String(Number.MAX_SAFE_INTEGER) }, "size")).toBe(Number.MAX_SAFE_INTEGER);
    const error = refusal(() => logSizeParam({ size: "9".repeat(2_000) }, "size"));
    expect({ message: error.message, location: error.location }).toEqual({
      message: `params/size must be an integer between 0 and ${Number.MAX_SAFE_INTEGER}`,
      location: "params",
    });
  });
});
