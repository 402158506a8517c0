/**
 * OpenTelemetry traces (docs/sidecar.md, "Traces"), received by an OTLP/HTTP receiver in this test: each request a
 * SERVER span, a child of the caller's `traceparent` (same trace id, the caller's span as parent), with a child span
 * per phase of the decision routes, and the request's log lines naming the trace and span. Exported as OTLP/JSON
 * (`http/json`) and, by default, as protobuf.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@writ/sidecar";
import type { LogLine } from "../support/built-sidecar.js";
import {
  AUTH,
  JSON_TYPE,
  TRANSFER,
  evaluate,
  executedActionFor,
  overrideOf,
  startE2eSidecar,
  uid,
  type E2eSidecar,
} from "../support/e2e.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { businessTransaction } from "../surface-b/support.js";

interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes: readonly { readonly key: string; readonly value: Record<string, unknown> }[];
  readonly status: { readonly code?: number };
  readonly traceState?: string;
}

interface Received {
  readonly contentType: string;
  readonly body: Buffer;
}

/** A collector's OTLP/HTTP traces endpoint: keeps every export it is sent. */
async function startReceiver(): Promise<{ readonly server: Server; readonly endpoint: string; readonly received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.method === "POST" && request.url === "/v1/traces")
        received.push({ contentType: request.headers["content-type"] ?? "", body: Buffer.concat(chunks) });
      response
        .writeHead(200, { "content-type": request.headers["content-type"] ?? "application/json" })
        .end(request.headers["content-type"]?.includes("json") ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the receiver does not listen");
  return { server, endpoint: `http://127.0.0.1:${address.port}`, received };
}

function spansOf(received: readonly Received[]): OtlpSpan[] {
  return received.flatMap((r) =>
    (JSON.parse(r.body.toString("utf8")) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }).resourceSpans.flatMap((rs) =>
      rs.scopeSpans.flatMap((ss) => ss.spans),
    ),
  );
}

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : (value["stringValue"] ?? value["intValue"]);
};

const SERVER = 2;
const INTERNAL = 1;

/** A fresh caller span: its trace id, its span id and the `traceparent` carrying them (sampled). */
function callerSpan(): { readonly traceId: string; readonly spanId: string; readonly traceparent: string } {
  const traceId = randomUUID().replaceAll("-", "");
  const spanId = randomUUID().replaceAll("-", "").slice(0, 16);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

describe("traces over OTLP/HTTP JSON", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const lines: LogLine[] = [];
  let s: E2eSidecar;
  let spans: OtlpSpan[];
  const calls = { evaluate: callerSpan(), override: callerSpan(), confirm: callerSpan(), transaction: callerSpan(), refused: callerSpan() };
  let untraced: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    const log = createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
    s = await startE2eSidecar(
      {
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "writ-under-test",
        SERVICE_B_PORT: "0",
      },
      { log },
    );
    const traced = (call: { readonly traceparent: string }) => ({ traceparent: call.traceparent, tracestate: "vendor=opaque" });
    const pending = await s.call<{ attestation: never }>(
      "POST",
      "/evaluate",
      { executionId: uid("traced"), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.pending },
      traced(calls.evaluate),
    );
    expect(pending.status).toBe(200);
    const executionId = (pending.body.attestation as { executionId: string }).executionId;
    expect((await s.call("POST", "/override", overrideOf(executionId, true), traced(calls.override))).status).toBe(200);
    const confirmation = { attestation: pending.body.attestation, executedAction: executedActionFor(pending.body.attestation) };
    expect((await s.call("POST", "/confirm-execution", confirmation, traced(calls.confirm))).status).toBe(200);
    const b = await fetch(`${s.running.urls.b}/execute`, {
      method: "POST",
      headers: { ...AUTH, ...JSON_TYPE, ...traced(calls.transaction) },
      body: JSON.stringify(businessTransaction()),
    });
    expect(b.status).toBe(200);
    expect(
      (await s.send("POST", "/evaluate", { headers: { authorization: "Bearer wrong-key-0123456789abcdef", ...traced(calls.refused) } }))
        .status,
    ).toBe(401);
    const plain = await evaluate(s, TRANSFER_SIGNALS.approved);
    untraced = plain.headers.get("x-request-id")!;
    // Closing exports the spans still queued.
    await s.close();
    spans = spansOf(receiver.received);
  });
  afterAll(async () => {
    await new Promise((resolve) => receiver.server.close(resolve));
  });

  /** The SERVER span of the call, and its children. */
  function traceOf(call: { readonly traceId: string; readonly spanId: string }): {
    readonly server: OtlpSpan;
    readonly children: OtlpSpan[];
  } {
    const inTrace = spans.filter((span) => span.traceId === call.traceId);
    const servers = inTrace.filter((span) => span.kind === SERVER);
    expect(servers).toHaveLength(1);
    const server = servers[0]!;
    expect(server.parentSpanId).toBe(call.spanId);
    const children = inTrace.filter((span) => span !== server);
    for (const child of children) {
      expect(child).toMatchObject({ parentSpanId: server.spanId, kind: INTERNAL });
      expect(BigInt(child.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(server.startTimeUnixNano));
      expect(BigInt(child.endTimeUnixNano)).toBeLessThanOrEqual(BigInt(server.endTimeUnixNano));
      expect(BigInt(child.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(child.startTimeUnixNano));
    }
    return { server, children };
  }

  /** Children in the order they started. */
  const names = (children: readonly OtlpSpan[]) =>
    [...children].sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1)).map((c) => c.name);

  it("POST /evaluate: a child of the caller's span, with bundle, validate, evaluate, sign, then verify and write", () => {
    const { server, children } = traceOf(calls.evaluate);
    expect(server.name).toBe("POST /evaluate");
    // The caller's tracestate goes on with its trace.
    expect(server.traceState).toBe("vendor=opaque");
    expect(attribute(server, "http.route")).toBe("/evaluate");
    expect(attribute(server, "http.response.status_code")).toBe(200);
    expect(attribute(server, "writ.policy_id")).toBe(TRANSFER.policyId);
    expect(attribute(server, "writ.policy_version")).toBe(TRANSFER.policyVersion);
    expect(attribute(server, "writ.verdict")).toBe("escalate");
    expect(attribute(server, "writ.rule")).toBe("large_transfer");
    expect(names(children).slice(0, 4)).toEqual(["writ.bundle", "writ.validate", "writ.evaluate", "writ.sign"]);
    expect(names(children).slice(4).sort()).toEqual(["writ.verify", "writ.write"]);
  });

  it("POST /override and POST /confirm-execution: their own phases", () => {
    expect(names(traceOf(calls.override).children)).toEqual(["writ.validate", "writ.sign", "writ.write"]);
    expect(names(traceOf(calls.confirm).children)).toEqual(["writ.verify", "writ.evaluate", "writ.sign", "writ.write"]);
  });

  it("Surface B POST /execute: the runtime's phases, then the seal, its check, the receipt and the record's write", () => {
    const { server, children } = traceOf(calls.transaction);
    expect(attribute(server, "writ.surface")).toBe("b");
    expect(names(children)).toEqual([
      "writ.bundle",
      "writ.validate",
      "writ.evaluate",
      "writ.sign",
      expect.stringMatching(/^writ\.(verify|write)$/),
      expect.stringMatching(/^writ\.(verify|write)$/),
      "writ.sign",
      "writ.verify",
      "writ.sign",
      "writ.write",
    ]);
  });

  it("a refused key is a span of its own with no phase; the trace context is still honoured", () => {
    const { server, children } = traceOf(calls.refused);
    expect(attribute(server, "http.response.status_code")).toBe(401);
    expect(children).toEqual([]);
  });

  it("a request without traceparent starts a trace of its own", () => {
    const span = spans.find((candidate) => candidate.kind === SERVER && attribute(candidate, "writ.request_id") === untraced);
    expect(span).toBeDefined();
    expect(span!.parentSpanId ?? "").toBe("");
    expect(span!.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(Object.values(calls).map((call) => call.traceId)).not.toContain(span!.traceId);
    expect(spans.filter((child) => child.parentSpanId === span!.spanId).map((child) => child.name)).toContain("writ.write");
  });

  it("names the service and the refused key's log line carries the trace and span ids", () => {
    const exported = JSON.parse(receiver.received[0]!.body.toString("utf8")) as {
      resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] } }[];
    };
    expect(exported.resourceSpans[0]!.resource.attributes).toContainEqual({
      key: "service.name",
      value: { stringValue: "writ-under-test" },
    });
    const refused = traceOf(calls.refused).server;
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: "authentication failed", traceId: calls.refused.traceId, spanId: refused.spanId }),
    );
  });
});

describe("traces over OTLP/HTTP protobuf, the default protocol", () => {
  it("are sent as protobuf to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, carrying the caller's trace id", async () => {
    const receiver = await startReceiver();
    try {
      const s = await startE2eSidecar({
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`,
      });
      const call = callerSpan();
      expect((await s.send("GET", "/health", { headers: { traceparent: call.traceparent } })).status).toBe(200);
      await s.close();
      expect(receiver.received.length).toBeGreaterThan(0);
      expect(receiver.received[0]!.contentType).toBe("application/x-protobuf");
      expect(Buffer.concat(receiver.received.map((r) => r.body)).includes(Buffer.from(call.traceId, "hex"))).toBe(true);
    } finally {
      await new Promise((resolve) => receiver.server.close(resolve));
    }
  });
});
