/**
 * One broken behaviour per mutation, each with the cases that must catch it. The proxy makes a correct server look
 * like a server with exactly that bug; the suite must then fail, and fail in those cases.
 */
import { randomUUID } from "node:crypto";
import type { Surface } from "../../src/case-file.js";
import { jsonOf, withJson, type Mutation, type ProxiedAnswer, type ProxiedRequest } from "./mutating-proxy.js";
import { API_KEY } from "../support/writ.js";

export interface MutationCase {
  readonly mutation: Mutation;
  readonly surface: Surface;
  /** Which cases run (an id prefix or a predicate): the rate-limit case needs a budget of its own. */
  readonly filter: (id: string) => boolean;
  /** Every one of these must fail. */
  readonly mustFail: readonly string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const route = (r: ProxiedRequest) => `${r.method} ${r.path.split("?")[0]}`;
const withoutRateLimit = (id: string) => id.startsWith("a.") && id !== "a.limits.rate-limit";

/** The answer's attestation changed by `change`, for signed answers of /evaluate and /execute. */
function changeAttestation(change: (attestation: Record<string, unknown>) => void) {
  return (request: ProxiedRequest, answer: ProxiedAnswer): ProxiedAnswer => {
    if (answer.status !== 200 || !["POST /evaluate", "POST /execute"].includes(route(request))) return answer;
    const body = jsonOf(answer.body);
    if (!isObject(body) || !isObject(body["attestation"])) return answer;
    change(body["attestation"]);
    return withJson(answer, body);
  };
}

export const MUTATIONS: readonly MutationCase[] = [
  {
    mutation: {
      name: "a wrong status: 404 Policy not found answered as 400",
      answer: (_request, answer) =>
        answer.status === 404 && (jsonOf(answer.body) as { error?: unknown } | undefined)?.error === "Policy not found"
          ? { ...answer, status: 400 }
          : answer,
    },
    surface: "a",
    filter: withoutRateLimit,
    mustFail: ["a.errors.policy-not-found", "a.errors.unknown-policy", "a.policy-schema.unknown-version", "a.policy-schema.unknown-policy"],
  },
  {
    mutation: {
      name: "an unsigned attestation: the signature member removed",
      answer: changeAttestation((attestation) => {
        delete attestation["signature"];
      }),
    },
    surface: "a",
    filter: withoutRateLimit,
    mustFail: ["a.evaluate.signed", "a.execute-legacy.signed", "a.evaluate.approved", "a.execute-legacy.approved"],
  },
  {
    mutation: {
      // A member no structural matcher pins down: only a signature check can notice.
      name: "a mis-signed attestation: provenance.bundleHash changed after signing",
      answer: changeAttestation((attestation) => {
        const provenance = attestation["provenance"];
        if (isObject(provenance)) provenance["bundleHash"] = "0".repeat(64);
        else attestation["bundleHash"] = "0".repeat(64);
      }),
    },
    surface: "a",
    filter: withoutRateLimit,
    mustFail: ["a.evaluate.signed", "a.execute-legacy.signed"],
  },
  {
    mutation: {
      name: "a replay accepted: every POST /evaluate gets a fresh executionId, so the server never sees a replay",
      request: (request) => {
        const body = jsonOf(request.body);
        if (route(request) !== "POST /evaluate" || !isObject(body) || typeof body["executionId"] !== "string") return request;
        return withJson(request, { ...body, executionId: `${body["executionId"]}-${randomUUID()}` });
      },
    },
    surface: "a",
    filter: withoutRateLimit,
    mustFail: ["a.errors.replay", "a.errors.concurrent-replay", "a.execute-legacy.replay-after-evaluate"],
  },
  {
    mutation: {
      name: "a missing auth check: the valid key is put on every request that lacks it",
      request: (request) =>
        request.headers["authorization"] === `Bearer ${API_KEY}`
          ? request
          : { ...request, headers: { ...request.headers, authorization: `Bearer ${API_KEY}` } },
    },
    surface: "a",
    filter: withoutRateLimit,
    mustFail: [
      "a.authentication.evaluate-none",
      "a.authentication.evaluate-wrong-key",
      "a.authentication.evaluate-not-bearer",
      "a.authentication.evaluate-empty-bearer",
      "a.authentication.execute",
      "a.authentication.audit-stats",
      "a.authentication.refused-has-no-effect",
    ],
  },
  {
    mutation: {
      name: "GET /health demanding the key",
      request: (request) =>
        route(request) === "GET /health" && request.headers["authorization"] !== `Bearer ${API_KEY}`
          ? { status: 401, headers: { "content-type": "application/json" }, body: Buffer.from('{"error":"Unauthorized"}') }
          : request,
    },
    surface: "a",
    filter: withoutRateLimit,
    mustFail: ["a.health.fields", "a.health.with-any-key", "a.runtime.one-runtime"],
  },
  {
    mutation: {
      name: "413 turned into 400",
      answer: (_request, answer) => (answer.status === 413 ? withJson({ ...answer, status: 400 }, { error: "Invalid request" }) : answer),
    },
    surface: "a",
    filter: withoutRateLimit,
    mustFail: [
      "a.limits.over-64kb-evaluate",
      "a.limits.over-64kb-execute",
      "a.limits.over-64kb-verify",
      "a.limits.over-64kb-confirm-execution",
      "a.limits.chunked-over-64kb",
    ],
  },
  {
    mutation: {
      name: "429 turned into 200",
      answer: (_request, answer) => (answer.status === 429 ? { ...answer, status: 200 } : answer),
    },
    surface: "a",
    filter: (id) => id === "a.limits.rate-limit",
    mustFail: ["a.limits.rate-limit"],
  },
  {
    mutation: {
      name: "a 14th Surface B route: GET /metrics answered 200",
      request: (request) =>
        route(request) === "GET /metrics"
          ? { status: 200, headers: { "content-type": "text/plain" }, body: Buffer.from("writ_up 1\n") }
          : request,
    },
    surface: "b",
    filter: (id) => id.startsWith("b."),
    mustFail: ["b.routes.absent-get-metrics"],
  },
];
