/**
 * One answer against a step's `expect`: status, headers, body (parsed strictly when it is JSON) and signatures.
 * Each problem is one human sentence: `status: expected 404, got 400`, `body /attestation/status: expected
 * "approved", got "rejected"`, `body /attestation/signature: signature does not verify`.
 */
import type { Expect } from "./case-file.js";
import type { HttpAnswer } from "./http-client.js";
import { resolvePointer } from "./json-pointer.js";
import { match, show, type MatchContext } from "./matchers.js";
import type { PinnedKey } from "./pinned-key.js";
import { signatureProblem } from "./signature.js";
import { decodeUtf8, parseStrictJson, StrictJsonError } from "./strict-json.js";

/** The body as the checks see it: JSON (strictly parsed), text, nothing, or why it could not be read. */
export type ParsedBody =
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "text"; readonly value: string }
  | { readonly kind: "none" }
  | { readonly kind: "invalid"; readonly problem: string };

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i;

export function parseBody(answer: HttpAnswer): ParsedBody {
  if (answer.bytes.length === 0) return { kind: "none" };
  let text: string;
  try {
    text = decodeUtf8(answer.bytes);
  } catch (e) {
    return { kind: "invalid", problem: (e as Error).message };
  }
  if (!JSON_TYPE.test(answer.headers["content-type"] ?? "")) return { kind: "text", value: text };
  try {
    return { kind: "json", value: parseStrictJson(text) };
  } catch (e) {
    return { kind: "invalid", problem: `not strict JSON: ${e instanceof StrictJsonError ? e.message : String(e)}` };
  }
}

/** The body's value for matching: undefined when there is none. */
export function bodyValue(body: ParsedBody): unknown {
  return body.kind === "json" || body.kind === "text" ? body.value : undefined;
}

function statusText(expected: number | readonly number[]): string {
  return typeof expected === "number" ? String(expected) : expected.length === 1 ? String(expected[0]) : `one of ${expected.join(", ")}`;
}

export function statusMatches(expected: number | readonly number[], status: number): boolean {
  return typeof expected === "number" ? expected === status : expected.includes(status);
}

/** Every way `answer` fails `expect` (only the status when that is wrong); empty when it passes. */
export function checkAnswer(answer: HttpAnswer, body: ParsedBody, expect: Expect, ctx: MatchContext, key: PinnedKey | null): string[] {
  const problems: string[] = [];
  if (expect.status !== undefined && !statusMatches(expect.status, answer.status)) {
    const seen = body.kind === "none" ? "no body" : body.kind === "invalid" ? body.problem : `body ${show(body.value)}`;
    // The body is shown here; its member-by-member mismatches would only repeat that the answer is another one.
    return [`status: expected ${statusText(expect.status)}, got ${answer.status} (${seen})`];
  }
  if (expect.headers !== undefined) {
    for (const mismatch of match(expect.headers, answer.headers, "", ctx)) {
      problems.push(`header ${mismatch.at.slice(1)}: ${mismatch.message}`);
    }
  }
  const needsBody = expect.body !== undefined || (expect.signatures?.length ?? 0) > 0;
  if (needsBody && body.kind === "invalid") {
    problems.push(`body: ${body.problem}`);
    return problems;
  }
  if (expect.body !== undefined) {
    for (const mismatch of match(expect.body, bodyValue(body), "", ctx))
      problems.push(`body${mismatch.at === "" ? "" : ` ${mismatch.at}`}: ${mismatch.message}`);
  }
  for (const check of expect.signatures ?? []) {
    if (key === null) {
      problems.push(`body ${check.at}: no public key pinned to check the signature`);
      continue;
    }
    const found = resolvePointer(bodyValue(body), check.at);
    if (!found.found) {
      problems.push(`body ${check.at || "/"}: missing, expected a signed ${check.from === "jcs-string" ? "string" : "object"}`);
      continue;
    }
    const problem = signatureProblem(
      {
        value: found.value,
        payloadType: check.payloadType,
        jcsString: check.from === "jcs-string",
        ...(check.omit ? { omit: check.omit } : {}),
      },
      key,
    );
    if (problem !== null) problems.push(`body ${check.from === "jcs-string" ? check.at : `${check.at}/signature`}: ${problem}`);
  }
  return problems;
}
