/**
 * OpenTelemetry traces (docs/sidecar.md, "Traces"): a SERVER span per request, a child of the caller's W3C
 * `traceparent` (and `tracestate`) when there is a valid one, with a child span per phase of a decision, exported over
 * OTLP/HTTP. Loaded only when tracing is configured: with it off, none of the SDK is imported and no span is made.
 *
 * The runtime times the phases it runs (a DecisionReport: data, no tracing library); the spans are made from those
 * timings once the request is answered, each with its own start and end.
 */
import type { IncomingHttpHeaders } from "node:http";
import { format } from "node:util";
import type { Span } from "@opentelemetry/api";
import pkg from "../../package.json";
import type { Logger } from "./logger.js";
import { decisionFields, type RequestDecision } from "./request-decision.js";

/** The W3C trace context samplers of `OTEL_TRACES_SAMPLER` (jaeger_remote and xray are not offered). */
export const TRACE_SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;

/** OpenTelemetry traces, exported over OTLP/HTTP (docs/sidecar.md, "Traces"); read from the standard `OTEL_*` variables. */
export interface TracingConfig {
  /** `http/protobuf` (the OTLP default) or `http/json`. */
  readonly protocol: "http/protobuf" | "http/json";
  /** Where spans are sent: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else `{OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`. */
  readonly url: string;
  /** OTEL_SERVICE_NAME; null: `writ-sidecar`, unless OTEL_RESOURCE_ATTRIBUTES names one. */
  readonly serviceName: string | null;
  readonly sampler: { readonly name: (typeof TRACE_SAMPLERS)[number]; readonly ratio: number };
}

export const DEFAULT_OTLP_TRACES_URL = "http://localhost:4318/v1/traces";

/** What the request's span says about it once it is answered. */
export interface AnsweredRequest {
  readonly surface: "a" | "b";
  readonly method: string;
  /** The route pattern; undefined when no route matched. */
  readonly route: string | undefined;
  /** The URL path, without the query string. */
  readonly path: string;
  /** The answer's status; null when the client went away first. */
  readonly status: number | null;
  readonly requestId: string;
  readonly decision: RequestDecision | null;
}

export interface Tracing {
  /** The SERVER span of a request, started now. */
  startRequest(headers: IncomingHttpHeaders): Span;
  /** Ends `span` with what the answer was, after the decision's phases as its children. */
  endRequest(span: Span, request: AnsweredRequest): void;
  /** Exports the spans still queued (waiting up to SHUTDOWN_FLUSH_MS) and stops exporting. */
  shutdown(): Promise<void>;
}

/** Spans not exported within this long of shutdown are dropped: shutdown never waits long on a collector. */
const SHUTDOWN_FLUSH_MS = 5_000;

export async function startTracing(config: TracingConfig, log: Logger): Promise<Tracing> {
  const [api, core, sdk, resources, semconv, otlp] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/core"),
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/semantic-conventions"),
    config.protocol === "http/json"
      ? import("@opentelemetry/exporter-trace-otlp-http")
      : import("@opentelemetry/exporter-trace-otlp-proto"),
  ]);
  // The SDK's own complaints (an export that failed) go to the log, as JSON like every other line.
  const diag = log.child({ component: "opentelemetry" });
  api.diag.setLogger(
    {
      error: (message, ...args) => diag.error(format(message, ...args)),
      warn: (message, ...args) => diag.warn(format(message, ...args)),
      info: (message, ...args) => diag.info(format(message, ...args)),
      debug: (message, ...args) => diag.debug(format(message, ...args)),
      verbose: (message, ...args) => diag.trace(format(message, ...args)),
    },
    api.DiagLogLevel.WARN,
  );

  const ratio = new sdk.TraceIdRatioBasedSampler(config.sampler.ratio);
  const samplers = {
    always_on: () => new sdk.AlwaysOnSampler(),
    always_off: () => new sdk.AlwaysOffSampler(),
    traceidratio: () => ratio,
    parentbased_always_on: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    parentbased_always_off: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    parentbased_traceidratio: () => new sdk.ParentBasedSampler({ root: ratio }),
  } as const;
  // service.name: OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES', else writ-sidecar.
  const resource = resources
    .resourceFromAttributes({ [semconv.ATTR_SERVICE_NAME]: "writ-sidecar", [semconv.ATTR_SERVICE_VERSION]: pkg.version })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
    .merge(config.serviceName === null ? null : resources.resourceFromAttributes({ [semconv.ATTR_SERVICE_NAME]: config.serviceName }));
  const provider = new sdk.BasicTracerProvider({
    resource,
    sampler: samplers[config.sampler.name](),
    spanProcessors: [new sdk.BatchSpanProcessor(new otlp.OTLPTraceExporter({ url: config.url }))],
  });
  const tracer = provider.getTracer("@writ/sidecar", pkg.version);
  const propagator = new core.W3CTraceContextPropagator();

  return {
    startRequest(headers) {
      const parent = propagator.extract(api.ROOT_CONTEXT, headers, api.defaultTextMapGetter);
      return tracer.startSpan("request", { kind: api.SpanKind.SERVER, startTime: core.hrTime() }, parent);
    },
    endRequest(span, request) {
      // Every instant on one clock, performance.now() from its time origin (`hrTime`): the SDK would convert each
      // span's with its own offset to Date.now(), whose milliseconds would misplace phases of a few microseconds.
      const end = core.hrTime();
      if (span.isRecording()) {
        span.updateName(request.route === undefined ? request.method : `${request.method} ${request.route}`);
        span.setAttributes({
          [semconv.ATTR_HTTP_REQUEST_METHOD]: request.method,
          [semconv.ATTR_URL_PATH]: request.path,
          [semconv.ATTR_HTTP_ROUTE]: request.route,
          [semconv.ATTR_HTTP_RESPONSE_STATUS_CODE]: request.status ?? undefined,
          "writ.surface": request.surface,
          "writ.request_id": request.requestId,
        });
        if (request.status === null || request.status >= 500) {
          span.setAttribute(semconv.ATTR_ERROR_TYPE, request.status === null ? "aborted" : String(request.status));
          span.setStatus({ code: api.SpanStatusCode.ERROR });
        }
        const decision = request.decision;
        if (decision !== null) {
          // An undefined attribute value is not set.
          const { executionId, policyId, policyVersion } = decisionFields(decision);
          span.setAttributes({
            "writ.execution_id": executionId,
            "writ.policy_id": policyId,
            "writ.policy_version": policyVersion,
            "writ.verdict": decision.decided?.verdict,
            "writ.rule": decision.decided?.ruleId,
          });
          const parent = api.trace.setSpan(api.ROOT_CONTEXT, span);
          for (const phase of decision.phases)
            tracer.startSpan(`writ.${phase.phase}`, { startTime: core.hrTime(phase.start) }, parent).end(core.hrTime(phase.end));
        }
      }
      span.end(end);
    },
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([provider.shutdown(), new Promise((resolve) => (timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS)))]);
      clearTimeout(timer);
    },
  };
}
