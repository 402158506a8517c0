/**
 * With tracing off, the sidecar still names the caller's trace on its log lines, parsing `traceparent` itself (the
 * OpenTelemetry SDK is not loaded then): it must accept and refuse exactly what the SDK's W3C propagator does.
 */
import type { IncomingMessage } from "node:http";
import { isSpanContextValid } from "@opentelemetry/api";
import { parseTraceParent } from "@opentelemetry/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { incomingTraceId } from "../../src/observability/request-telemetry.js";

const hex = (length: number) => fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: length, maxLength: length });
/** Mostly well-formed fields, sometimes zeros, the wrong length, upper case or not hex. */
const field = (length: number) =>
  fc.oneof(
    { weight: 6, arbitrary: hex(length) },
    { weight: 1, arbitrary: fc.constant("0".repeat(length)) },
    { weight: 1, arbitrary: hex(length + 1) },
    { weight: 1, arbitrary: hex(length).map((h) => h.toUpperCase()) },
    { weight: 1, arbitrary: fc.string({ minLength: length, maxLength: length }) },
  );
const traceparent = fc
  .tuple(
    fc.oneof(fc.constantFrom("00", "01", "fe", "ff"), field(2)),
    field(32),
    field(16),
    field(2),
    fc.option(fc.string(), { nil: undefined }),
  )
  .map(([version, traceId, parentId, flags, rest]) => `${version}-${traceId}-${parentId}-${flags}${rest === undefined ? "" : `-${rest}`}`);

const request = (header: string) => ({ headers: { traceparent: header } }) as unknown as IncomingMessage;

function sdkTraceId(header: string): string | undefined {
  const parent = parseTraceParent(header);
  return parent !== null && isSpanContextValid(parent) ? parent.traceId : undefined;
}

describe("incomingTraceId", () => {
  it("agrees with the OpenTelemetry W3C propagator on every traceparent", () => {
    fc.assert(
      fc.property(fc.oneof(traceparent, fc.string()), (header) => {
        expect(incomingTraceId(request(header))).toBe(sdkTraceId(header));
      }),
      { numRuns: 2_000 },
    );
  });

  it("reads a valid one, and nothing without the header", () => {
    expect(incomingTraceId(request("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(incomingTraceId(request("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"))).toBeUndefined();
    expect(incomingTraceId(request("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"))).toBe(
      "4bf92f3577b34da6a3ce929d0e0e4736",
    );
    expect(incomingTraceId({ headers: {} } as IncomingMessage)).toBeUndefined();
  });
});
