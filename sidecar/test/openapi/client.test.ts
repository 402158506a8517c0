/**
 * A client generated from Surface A's OpenAPI document, as an application in any language would make one: the types
 * openapi-typescript generates from docs/openapi/surface-a.json (committed in generated/, checked current here) and
 * openapi-fetch, against a real listening sidecar. Nothing of writ's own client code is used.
 */
import { readFileSync } from "node:fs";
import createClient from "openapi-fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAttestation } from "@writ/runtime";
import { CLIENT_TYPES_PATH, clientTypesText } from "../../scripts/openapi.js";
import { API_KEY, TRANSFER, offlineVerifier, publicKeyOf, startE2eSidecar, uid, type E2eSidecar } from "../support/e2e.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import type { paths } from "./generated/surface-a.js";

let s: E2eSidecar;
beforeAll(async () => {
  s = await startE2eSidecar();
});
afterAll(async () => {
  await s.close();
});

const client = () => createClient<paths>({ baseUrl: s.url, headers: { authorization: `Bearer ${API_KEY}` } });

describe("a client generated from the OpenAPI document", () => {
  it("its types are what openapi-typescript generates from the committed document (`npm run openapi` writes them)", async () => {
    expect(readFileSync(CLIENT_TYPES_PATH, "utf8")).toBe(await clientTypesText());
  });

  it("POST /evaluate: a signed decision whose attestation verifies offline", async () => {
    const executionId = uid("generated-client");
    const { data, error, response } = await client().POST("/evaluate", {
      body: { executionId, ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved },
    });
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    if (data === undefined || !("attestation" in data)) throw new Error("no signed decision");
    expect(data).toMatchObject({ status: "approved", requires_override: false, attestation: { executionId } });
    const key = await publicKeyOf(s);
    expect(verifyAttestation(data.attestation, offlineVerifier(key, data.attestation.provenance.trustRootVersion)).valid).toBe(true);
  });

  it("an error answer is the document's error body, typed", async () => {
    const { data, error, response } = await client().POST("/evaluate", {
      body: {
        executionId: uid("generated-client"),
        policyId: TRANSFER.policyId,
        policyVersion: "9.9.9",
        verifiedSignals: TRANSFER_SIGNALS.approved,
      },
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(404);
    expect(error).toEqual({ error: "Policy not found" });
  });

  it("a path parameter and a query: the policy schema and the audit trail", async () => {
    const schema = await client().GET("/policies/{policyId}/versions/{version}/schema", {
      params: { path: { policyId: TRANSFER.policyId, version: TRANSFER.policyVersion } },
    });
    expect(schema.data).toMatchObject({ policyId: TRANSFER.policyId, governs: { actionType: "transfer.execute" } });
    const decisions = await client().GET("/audit/decisions", { params: { query: { policyId: TRANSFER.policyId, limit: 1 } } });
    expect(decisions.response.status).toBe(200);
    expect(decisions.data).toHaveLength(1);
  });
});
