/**
 * What an operator reads about each request (docs/sidecar.md, "Observability"), on a listening sidecar whose log is
 * captured: the `x-request-id` echoed or generated, on every line of the request with the caller's trace id; failure
 * lines naming the execution and policy version; the access log when it is on; and metrics whose labels are bounded
 * (an unknown policyId mints none).
 */
import { randomUUID } from "node:crypto";
import { appendFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, type Logger } from "@writ/sidecar";
import type { LogLine } from "../support/built-sidecar.js";
import { API_KEY, TRANSFER, copyOfFixturePolicies, evaluate, startE2eSidecar, uid, type E2eSidecar } from "../support/e2e.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;
/** conformance.transfer@1.1.0 does not load in `policies` (its IR no longer matches the manifest). */
const BROKEN = { policyId: TRANSFER.policyId, policyVersion: "1.1.0" } as const;

/** A root logger whose lines are kept, parsed. */
function capturedLog(): { readonly log: Logger; readonly lines: LogLine[] } {
  const lines: LogLine[] = [];
  return { log: createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) }), lines };
}

let policies: string;
let s: E2eSidecar;
let logged: LogLine[];

beforeAll(async () => {
  policies = await copyOfFixturePolicies();
  await appendFile(join(policies, BROKEN.policyId, BROKEN.policyVersion, "policy.ir.json"), " ");
  const captured = capturedLog();
  logged = captured.lines;
  s = await startE2eSidecar({ SERVICE_ACCESS_LOG: "on", SERVICE_LOG_LEVEL: "info" }, { policiesRoot: policies, log: captured.log });
});
afterAll(async () => {
  await s.close();
  await rm(policies, { recursive: true, force: true });
});

const linesOf = (requestId: string) => logged.filter((line) => line["requestId"] === requestId);

describe("request ids", () => {
  it("echoes a sane x-request-id and puts it on every line of the request", async () => {
    const id = `req-${randomUUID()}`;
    const r = await s.call("GET", "/audit/stats", undefined, { "x-request-id": id });
    expect(r.headers.get("x-request-id")).toBe(id);
    expect(linesOf(id)).toEqual([
      expect.objectContaining({
        level: "info",
        msg: "request",
        method: "GET",
        route: "/audit/stats",
        status: r.status,
        surface: "a",
        durationMs: expect.any(Number),
      }),
    ]);
  });

  it("generates a random one without, or for one that is too long, not printable ASCII or two headers joined", async () => {
    const generated: string[] = [];
    for (const given of [undefined, "x".repeat(129), "has space", "tab\there", "é-not-ascii", "a, b"]) {
      const r = await s.send("GET", "/health", given === undefined ? {} : { headers: { "x-request-id": given } });
      const id = r.headers.get("x-request-id")!;
      expect(id, String(given)).toMatch(UUID);
      generated.push(id);
    }
    expect(new Set(generated).size).toBe(generated.length);
    // 128 visible ASCII characters are kept as they are.
    const longest = "!~".repeat(64);
    expect((await s.send("GET", "/health", { headers: { "x-request-id": longest } })).headers.get("x-request-id")).toBe(longest);
  });

  it("answers a refused key, an unknown route and a bad URL with the request id too", async () => {
    const id = `req-${randomUUID()}`;
    expect((await s.send("GET", "/audit/stats", { headers: { "x-request-id": id } })).headers.get("x-request-id")).toBe(id);
    expect((await s.call("GET", "/no/such/route", undefined, { "x-request-id": `${id}-404` })).headers.get("x-request-id")).toBe(
      `${id}-404`,
    );
    expect(
      (await s.call("GET", "/policies/%E0%A4%A/versions/1.0.0/schema", undefined, { "x-request-id": `${id}-400` })).headers.get(
        "x-request-id",
      ),
    ).toBe(`${id}-400`);
  });
});

describe("log lines of a request", () => {
  it("a refused key: one warn line saying so, never the key; the caller's trace id on it", async () => {
    const id = `req-${randomUUID()}`;
    const wrong = `${API_KEY}-but-wrong`;
    await s.send("POST", "/evaluate", { headers: { authorization: `Bearer ${wrong}`, "x-request-id": id, traceparent: TRACEPARENT } });
    expect(linesOf(id)).toEqual([
      expect.objectContaining({
        level: "warn",
        msg: "authentication failed",
        credential: "refused",
        method: "POST",
        route: "/evaluate",
        traceId: TRACE_ID,
      }),
      expect.objectContaining({ msg: "request", status: 401, traceId: TRACE_ID }),
    ]);
    expect(JSON.stringify(logged)).not.toContain(wrong);
    expect(JSON.stringify(logged)).not.toContain(API_KEY);
  });

  it("a failed execution: execute:failure names the execution, the policy version, the request and the trace", async () => {
    const executionId = uid("replayed");
    await evaluate(s, TRANSFER_SIGNALS.approved, executionId);
    const id = `req-${randomUUID()}`;
    const again = await s.call(
      "POST",
      "/evaluate",
      { executionId, ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved },
      { "x-request-id": id, traceparent: TRACEPARENT },
    );
    expect(again.status).toBe(422);
    expect(linesOf(id)).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "execute:failure",
        code: "INV-013",
        status: 422,
        executionId,
        ...TRANSFER,
        requestId: id,
        traceId: TRACE_ID,
      }),
    );
  });

  it("a bundle that does not load: the refusal names the execution and the policy version asked for", async () => {
    const id = `req-${randomUUID()}`;
    const executionId = uid("broken");
    const r = await s.call("POST", "/execute", { executionId, ...BROKEN, signals: TRANSFER_SIGNALS.approved }, { "x-request-id": id });
    expect(r.status).toBe(422);
    expect(linesOf(id)).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "policy bundle does not load",
        executionId,
        ...BROKEN,
        reason: expect.stringContaining("does not load"),
      }),
    );
    expect(linesOf(id)).toContainEqual(
      expect.objectContaining({ msg: "execute:failure", code: "POLICY_BUNDLE_INVALID", executionId, ...BROKEN }),
    );
  });

  it("an invalid traceparent (all-zero trace id) gives no trace id", async () => {
    const id = `req-${randomUUID()}`;
    await s.send("GET", "/health", { headers: { "x-request-id": id, traceparent: `00-${"0".repeat(32)}-00f067aa0ba902b7-01` } });
    expect(linesOf(id)).toHaveLength(1);
    expect(linesOf(id)[0]).not.toHaveProperty("traceId");
  });

  it("without the access log, a request that goes well writes no line at all", async () => {
    const captured = capturedLog();
    const quiet = await startE2eSidecar({ SERVICE_LOG_LEVEL: "info" }, { log: captured.log });
    try {
      const before = captured.lines.length;
      expect((await evaluate(quiet, TRANSFER_SIGNALS.approved)).status).toBe(200);
      expect((await quiet.send("GET", "/health")).status).toBe(200);
      expect(captured.lines.slice(before)).toEqual([]);
    } finally {
      await quiet.close();
    }
  });
});

describe("metrics", () => {
  it("count decisions by policy, version, verdict and rule of the bundle that decided; an unknown policy mints no label", async () => {
    const fresh = await startE2eSidecar();
    try {
      for (const signals of [TRANSFER_SIGNALS.approved, TRANSFER_SIGNALS.approved, TRANSFER_SIGNALS.pending, TRANSFER_SIGNALS.rejected]) {
        expect((await evaluate(fresh, signals)).status).toBe(200);
      }
      const replayed = uid("replayed");
      await evaluate(fresh, TRANSFER_SIGNALS.approved, replayed);
      expect((await evaluate(fresh, TRANSFER_SIGNALS.approved, replayed)).status).toBe(422);
      const minted = `minted-${randomUUID()}`;
      expect(
        (
          await fresh.call("POST", "/evaluate", {
            executionId: uid("unknown"),
            policyId: minted,
            policyVersion: "6.6.6",
            verifiedSignals: {},
          })
        ).status,
      ).toBe(404);
      expect(
        (await fresh.call("POST", "/execute", { executionId: uid("unknown"), policyId: minted, policyVersion: "6.6.6", signals: {} }))
          .status,
      ).toBe(422);

      const metrics = (await fresh.call<string>("GET", "/metrics")).body;
      const labels = 'surface="a",route="/evaluate",policy_id="conformance.transfer",policy_version="1.0.0"';
      // The replay's second answer (422) is not a decision answered.
      expect(metrics).toContain(`writ_decisions_total{${labels},verdict="approve",rule="verified_customer"} 3`);
      expect(metrics).toContain(`writ_decisions_total{${labels},verdict="escalate",rule="large_transfer"} 1`);
      expect(metrics).toContain(`writ_decisions_total{${labels},verdict="reject",rule="risk_too_high"} 1`);
      expect(metrics).not.toContain(minted);
      expect(metrics).not.toContain("6.6.6");
      // Every durable write of /evaluate is timed, the refused replay's included.
      expect(metrics).toContain('writ_store_write_duration_seconds_count{surface="a",route="/evaluate"} 6');
      // The preflight loaded the fixture bundles; the unknown policy was looked for (not_found), twice.
      expect(metrics).toMatch(/^writ_bundle_loads_total\{outcome="loaded"\} [1-9]\d*$/m);
      expect(metrics).toContain('writ_bundle_loads_total{outcome="not_found"} 2');
      expect(metrics).toMatch(/^writ_bundle_load_seconds_total\{outcome="loaded"\} \d+(\.\d+)?(e-\d+)?$/m);
      expect(metrics).toContain("writ_audit_healthy 1");
      // The data file against the pages in use (docs/sidecar.md, "Compaction").
      const bytes = (series: string) => Number(new RegExp(`^${series} (\\d+)$`, "m").exec(metrics)?.[1]);
      expect(bytes("writ_lmdb_used_bytes")).toBeGreaterThan(0);
      expect(bytes("writ_lmdb_file_bytes")).toBeGreaterThanOrEqual(bytes("writ_lmdb_used_bytes"));
    } finally {
      await fresh.close();
    }
  });

  it("an event-loop stall is counted in the delay histogram, is the max since the previous scrape, and is /health's lag", async () => {
    const sample = (text: string, series: string): number => {
      const line = text.split("\n").find((l) => l.startsWith(`${series} `));
      if (line === undefined) throw new Error(`no sample \`${series}\``);
      return Number(line.slice(series.length + 1));
    };
    const atLeastQuarterSecond = (text: string) =>
      sample(text, 'writ_event_loop_delay_seconds_bucket{le="+Inf"}') - sample(text, 'writ_event_loop_delay_seconds_bucket{le="0.25"}');
    const before = (await s.call<string>("GET", "/metrics")).body;
    // The sidecar runs in this process: a busy loop here stalls its event loop.
    const until = performance.now() + 300;
    while (performance.now() < until);
    await new Promise((resolve) => setTimeout(resolve, 50));

    const after = (await s.call<string>("GET", "/metrics")).body;
    expect(after).toContain("# TYPE writ_event_loop_delay_seconds histogram");
    expect(atLeastQuarterSecond(after) - atLeastQuarterSecond(before)).toBeGreaterThanOrEqual(1);
    expect(sample(after, "writ_event_loop_delay_max_seconds")).toBeGreaterThanOrEqual(0.25);
    expect(sample(after, "writ_event_loop_delay_seconds_count")).toBeGreaterThan(sample(before, "writ_event_loop_delay_seconds_count"));
    // Taken by that scrape: the next one reports only what came after it.
    expect(sample((await s.call<string>("GET", "/metrics")).body, "writ_event_loop_delay_max_seconds")).toBeLessThan(0.25);
    // /health keeps the largest delay of the last seconds, whoever scraped.
    expect((await s.send<{ event_loop_lag_ms: number }>("GET", "/health")).body.event_loop_lag_ms).toBeGreaterThanOrEqual(250);
  });

  it("audit health is 0 with audit off", async () => {
    const off = await startE2eSidecar({ SERVICE_AUDIT: "off" });
    try {
      expect((await off.call<string>("GET", "/metrics")).body).toContain("writ_audit_healthy 0");
    } finally {
      await off.close();
    }
  });
});
