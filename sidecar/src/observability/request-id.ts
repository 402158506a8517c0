/**
 * Every request has an id (docs/sidecar.md, "Request ids"): the caller's `x-request-id` when it is sane, else a random
 * UUID. It is on every log line of the request and echoed in the answer's `x-request-id` header.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const REQUEST_ID_HEADER = "x-request-id";

/** The name of the request id on log lines. */
export const REQUEST_ID_LOG_LABEL = "requestId";

/** 1 to 128 visible ASCII characters: anything else (a space, a control or non-ASCII character, two headers joined) is replaced. */
const SANE = /^[!-~]{1,128}$/;

export function requestIdOf(raw: IncomingMessage): string {
  const given = raw.headers[REQUEST_ID_HEADER];
  return typeof given === "string" && SANE.test(given) ? given : randomUUID();
}
