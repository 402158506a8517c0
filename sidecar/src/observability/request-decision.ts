/**
 * What a decision route tells the logs, the spans and the metrics about its request: what it was asked (the execution
 * and the policy version, for failure lines) and the runtime's report (the phases, for spans and the store write
 * latency; the deciding bundle and rule, for the decision counter). A route sets it once the body is valid
 * (`trackDecision`) and hands it to the runtime as its DecisionReport.
 */
import type { FastifyRequest } from "fastify";
import type { DecisionReport } from "@writ/runtime";

/** Caller input, checked by the route's schema: fit for log lines and spans, never for metric labels. */
export interface DecisionSubject {
  readonly executionId?: string | undefined;
  readonly policyId?: string | undefined;
  readonly policyVersion?: string | undefined;
}

export interface RequestDecision extends DecisionReport {
  readonly subject: DecisionSubject;
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by a decision route (trackDecision); null on every other request. */
    decision: RequestDecision | null;
  }
}

export function trackDecision(request: FastifyRequest, subject: DecisionSubject): RequestDecision {
  const decision: RequestDecision = {
    phases: [],
    subject: { executionId: subject.executionId, policyId: subject.policyId, policyVersion: subject.policyVersion },
  };
  request.decision = decision;
  return decision;
}

/**
 * What a failure line (and a span) says about the decision when it is known: `executionId`, `policyId` and
 * `policyVersion` (the deciding bundle's own, once a policy version decided; else what the request asked for).
 * A field left undefined is left out of the line.
 */
export function decisionFields(decision: RequestDecision | null): DecisionSubject {
  if (decision === null) return {};
  const { policyId, policyVersion } = decision.decided ?? decision.subject;
  return { executionId: decision.subject.executionId, policyId, policyVersion };
}

/** A string member of untrusted JSON (an attestation presented for confirmation), else undefined. */
export function stringMember(value: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const member = value[name];
  return typeof member === "string" ? member : undefined;
}
