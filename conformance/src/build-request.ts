/**
 * A case step's request, as the bytes and headers that go on the wire: templates resolved, the Authorization
 * header of the step's `auth` variant (spec 5), and the body as JSON, verbatim text, or padded to an exact size.
 */
import type { AuthVariant, RequestSpec } from "./case-file.js";
import type { OutgoingRequest } from "./http-client.js";
import { resolveString, resolveValue, TemplateError, type CaseScope } from "./templates.js";

/** A key of the same length as `apiKey` that differs in its last character: a near miss must be refused too. */
export function wrongKeyFor(apiKey: string): string {
  const last = apiKey.at(-1);
  return `${apiKey.slice(0, -1)}${last === "x" ? "y" : "x"}`;
}

export function authorizationFor(auth: AuthVariant, apiKey: string): string | undefined {
  switch (auth) {
    case "valid":
      return `Bearer ${apiKey}`;
    case "none":
      return undefined;
    case "wrong-key":
      return `Bearer ${wrongKeyFor(apiKey)}`;
    case "not-bearer":
      // The right key under another scheme: only Bearer is accepted (spec 5.1).
      return `Basic ${Buffer.from(`conformance:${apiKey}`).toString("base64")}`;
    case "empty-bearer":
      return "Bearer";
  }
}

/**
 * `body` serialized and padded with blanks after its opening brace to exactly `bytes` bytes: still the same JSON
 * value, so a body at the limit is accepted or refused for its size alone.
 * @throws TemplateError when the body alone is larger than `bytes`
 */
export function paddedJson(body: unknown, bytes: number): Buffer {
  const text = JSON.stringify(body);
  if (!text.startsWith("{")) throw new TemplateError("`oversizeBody.body` must be a JSON object");
  const room = bytes - Buffer.byteLength(text, "utf8");
  if (room < 0) throw new TemplateError(`\`oversizeBody.body\` is already ${Buffer.byteLength(text, "utf8")} bytes, more than ${bytes}`);
  return Buffer.from(`{${" ".repeat(room)}${text.slice(1)}`, "utf8");
}

/** @throws TemplateError when a template cannot be resolved */
export function buildRequest(spec: RequestSpec, scope: CaseScope, apiKey: string): OutgoingRequest {
  const headers: Record<string, string> = {};
  const authorization = authorizationFor(spec.auth ?? "valid", apiKey);
  if (authorization !== undefined) headers["authorization"] = authorization;
  let body: Buffer | undefined;
  let chunked = false;
  if (spec.body !== undefined) {
    body = Buffer.from(JSON.stringify(resolveValue(spec.body, scope)), "utf8");
  } else if (spec.rawBody !== undefined) {
    body = Buffer.from(spec.rawBody, "utf8");
  } else if (spec.oversizeBody !== undefined) {
    body = paddedJson(resolveValue(spec.oversizeBody.body ?? {}, scope), spec.oversizeBody.bytes);
    chunked = spec.oversizeBody.chunked === true;
  }
  if (body !== undefined) headers["content-type"] = "application/json";
  for (const [name, value] of Object.entries(spec.headers ?? {})) headers[name.toLowerCase()] = resolveString(value, scope);
  return { method: spec.method, path: resolveString(spec.path, scope, "path"), headers, ...(body === undefined ? {} : { body }), chunked };
}
