/** The checks' decisions: examples/evaluate-request.json sent to a sidecar of a block, with a fresh executionId. */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { request } from "./http.js";

export type Attestation = Record<string, unknown> & { readonly executionId: string; readonly policyVersion: string };

/** The shipped request of the clone at `dir`, with its `executionId` and `changes`. */
export function evaluateRequest(dir: string, changes: Record<string, unknown> = {}): Record<string, unknown> & { executionId: string } {
  const shipped = JSON.parse(readFileSync(join(dir, "examples/evaluate-request.json"), "utf8")) as Record<string, unknown> & {
    executionId: string;
  };
  return { ...shipped, executionId: `docs-${randomUUID()}`, ...changes };
}

/** POST /evaluate, which must answer 200 approved; `what` names the doc block in the failure message. */
export async function approved(what: string, url: string, apiKey: string, body: Record<string, unknown>): Promise<Attestation> {
  const answer = await request("POST", `${url}/evaluate`, apiKey, body);
  expect(
    { status: answer.status, decision: answer.body["status"] },
    `${what}: POST ${url}/evaluate answered ${JSON.stringify(answer.body)}`,
  ).toEqual({
    status: 200,
    decision: "approved",
  });
  return answer.body["attestation"] as Attestation;
}
