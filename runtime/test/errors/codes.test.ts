import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ERROR_CODES,
  errorBody,
  isErrorCode,
  isRetryable,
  rateLimitedBody,
  signalValidationBody,
  statusOf,
  type ErrorCode,
} from "../../src/errors/codes.js";
import { createSignalValidator } from "../../src/signals/validate.js";

const read = (relative: string): string => readFileSync(new URL(relative, import.meta.url), "utf8");

const CODES = Object.keys(ERROR_CODES) as ErrorCode[];

interface DocRow {
  readonly code: string;
  readonly status: number;
  readonly message: string;
  readonly retryable: boolean;
  readonly meaning: string;
}

/** The rows of the `## Codes` table of docs/errors.md. */
function docRows(): DocRow[] {
  const lines = read("../../../docs/errors.md").split("\n");
  const start = lines.findIndex((l) => l.trim() === "## Codes");
  expect(start, "docs/errors.md has a `## Codes` heading").toBeGreaterThanOrEqual(0);
  const rest = lines.slice(start + 1);
  const first = rest.findIndex((l) => l.startsWith("|"));
  const table: string[] = [];
  for (const line of rest.slice(first)) {
    if (!line.startsWith("|")) break;
    table.push(line);
  }
  expect(table.length, "header, separator and rows").toBeGreaterThan(2);
  return table.slice(2).map((line) => {
    const cells = line
      .slice(1, line.endsWith("|") ? -1 : undefined)
      .split("|")
      .map((c) => c.trim());
    expect(cells, line).toHaveLength(5);
    const [code = "", status = "", message = "", retry = "", meaning = ""] = cells;
    const unquote = (cell: string): string => {
      const m = /^`([^`]+)`$/.exec(cell);
      expect(m, `\`${cell}\` is one backticked value in: ${line}`).not.toBeNull();
      return m?.[1] ?? "";
    };
    expect(retry, line).toMatch(/^(no|yes, with backoff)$/);
    return {
      code: unquote(code),
      status: Number(status),
      message: unquote(message),
      retryable: retry.startsWith("yes"),
      meaning: meaning.replaceAll("`", ""),
    };
  });
}

/** What the docs show in the message column: the body's `error` with the default context. */
function documentedMessage(code: ErrorCode): string {
  const entry = ERROR_CODES[code];
  return "context" in entry ? `[${code}@${entry.context}] ${entry.message}` : entry.message;
}

describe("docs/errors.md and ERROR_CODES are the same table", () => {
  const rows = docRows();

  it("documents exactly the codes of the table, each once", () => {
    const documented = rows.map((r) => r.code);
    expect(new Set(documented).size, "no code documented twice").toBe(documented.length);
    expect([...documented].sort()).toEqual([...CODES].sort());
  });

  it.each(rows.map((r) => [r.code, r] as const))("%s: status, message, retry and meaning agree", (code, row) => {
    expect(isErrorCode(code), `\`${code}\` is documented but not in ERROR_CODES`).toBe(true);
    if (!isErrorCode(code)) return;
    const entry = ERROR_CODES[code];
    expect(row.status).toBe(entry.status);
    expect(row.message).toBe(documentedMessage(code));
    expect(row.retryable).toBe(entry.retryable);
    expect(row.meaning).toBe(entry.meaning);
  });
});

describe("the table's own rules", () => {
  it("follows the spec's retry guidance: 400, 401, 413, 422 not retried; 429 and 5xx retried", () => {
    for (const code of CODES) {
      const { status } = ERROR_CODES[code];
      if (status === 429 || status >= 500) expect(isRetryable(code), code).toBe(true);
      else expect(isRetryable(code), code).toBe(false);
    }
  });

  it("keeps writ's own messages lowercase without a final period", () => {
    const specWorded = new Set([
      "Invalid request",
      "Unauthorized",
      "Policy not found",
      "Pending override not found",
      "Override already resolved",
      "Request body too large",
      "Signal validation failed",
      "Signals validation failed",
      "Rate limit exceeded",
      "Evaluation failed",
      "Governed execution runtime not configured",
      "businessTransactionId must be a valid UUID.",
    ]);
    for (const code of CODES) {
      const { message } = ERROR_CODES[code];
      if (specWorded.has(message)) continue;
      expect(message, code).toBe(message.toLowerCase().replace("executionid", "executionId"));
      expect(message.endsWith("."), code).toBe(false);
    }
  });

  it("gives a context exactly to the named codes", () => {
    const named = CODES.filter((c) => /^(INV-|SYS-|EVAL-|INTEGRITY_)/.test(c));
    expect(CODES.filter((c) => "context" in ERROR_CODES[c]).sort()).toEqual(named.sort());
  });
});

describe("errorBody, statusOf, isRetryable", () => {
  it('401 is exactly {"error":"Unauthorized"}', () => {
    expect(statusOf("UNAUTHORIZED")).toBe(401);
    expect(JSON.stringify(errorBody("UNAUTHORIZED"))).toBe('{"error":"Unauthorized"}');
  });

  it("413 says Request body too large", () => {
    expect(statusOf("BODY_TOO_LARGE")).toBe(413);
    expect(errorBody("BODY_TOO_LARGE")).toEqual({ error: "Request body too large" });
  });

  it("400 in both spec forms, and the Surface B UUID message with its period", () => {
    expect(statusOf("MISSING_PROPERTY")).toBe(400);
    expect(errorBody("MISSING_PROPERTY", "executionId")).toEqual({ error: "body must have required property 'executionId'" });
    expect(errorBody("BAD_REQUEST")).toEqual({ error: "Invalid request" });
    expect(errorBody("MISSING_PROPERTY", "$&x").error).toBe("body must have required property '$&x'");
    expect(statusOf("INVALID_BUSINESS_TRANSACTION_ID")).toBe(400);
    expect(errorBody("INVALID_BUSINESS_TRANSACTION_ID")).toEqual({ error: "businessTransactionId must be a valid UUID." });
  });

  it("uses the spec's wording for 404, 409, 500 and 503", () => {
    expect(errorBody("POLICY_NOT_FOUND")).toEqual({ error: "Policy not found" });
    expect(errorBody("PENDING_OVERRIDE_NOT_FOUND")).toEqual({ error: "Pending override not found" });
    expect(errorBody("OVERRIDE_ALREADY_RESOLVED")).toEqual({ error: "Override already resolved" });
    expect(errorBody("EVALUATION_FAILED")).toEqual({ error: "Evaluation failed" });
    expect(errorBody("RUNTIME_NOT_CONFIGURED")).toEqual({ error: "Governed execution runtime not configured" });
    expect([statusOf("POLICY_NOT_FOUND"), statusOf("OVERRIDE_ALREADY_RESOLVED")]).toEqual([404, 409]);
    expect([statusOf("EVALUATION_FAILED"), statusOf("RUNTIME_NOT_CONFIGURED")]).toEqual([500, 503]);
  });

  it("prefixes 422 named codes with [CODE@context]", () => {
    expect(statusOf("INV-013")).toBe(422);
    expect(errorBody("INV-013")).toEqual({ error: "[INV-013@replay] execution already consumed: use a new executionId" });
    expect(errorBody("SYS-023", "override")).toEqual({ error: "[SYS-023@override] override lineage mismatch" });
    expect(errorBody("INTEGRITY_INVALID_ATTESTATION").error).toMatch(/^\[INTEGRITY_INVALID_ATTESTATION@confirm-execution\] /);
    for (const code of CODES) {
      const entry = ERROR_CODES[code];
      if (entry.status === 422 && "context" in entry)
        expect(errorBody(code as "INV-013").error, code).toMatch(/^\[[A-Z0-9_-]+@[a-z-]+\] [a-z]/);
    }
  });

  it("keeps the spec's unprefixed 422 messages", () => {
    expect(errorBody("POLICY_BUNDLE_MISSING")).toEqual({ error: "Policy not found" });
    expect(errorBody("SIGNAL_VALIDATION_FAILED")).toEqual({ error: "Signal validation failed" });
    expect(errorBody("SIGNALS_VALIDATION_FAILED")).toEqual({ error: "Signals validation failed" });
  });

  it("retries 429 and 5xx, never 400, 401, 413 or the replay 422", () => {
    expect(isRetryable("RATE_LIMITED")).toBe(true);
    for (const code of ["EVALUATION_FAILED", "INTERNAL_ERROR", "RUNTIME_NOT_CONFIGURED", "REPLAY_STORE_UNAVAILABLE"] as const) {
      expect(statusOf(code)).toBeGreaterThanOrEqual(500);
      expect(isRetryable(code), code).toBe(true);
    }
    for (const code of ["BAD_REQUEST", "MISSING_PROPERTY", "UNAUTHORIZED", "BODY_TOO_LARGE", "INV-013", "INV-REPLAY-001"] as const) {
      expect(isRetryable(code), code).toBe(false);
    }
  });

  it("answers the open statuses as docs/errors.md chooses", () => {
    expect(statusOf("INTEGRITY_INVALID_ATTESTATION")).toBe(422);
    expect(statusOf("INTEGRITY_ALREADY_CONFIRMED")).toBe(409);
    expect(errorBody("INTEGRITY_ALREADY_CONFIRMED")).toEqual({
      error: "[INTEGRITY_ALREADY_CONFIRMED@confirm-execution] execution already confirmed",
    });
    expect(statusOf("VAL-006")).toBe(422);
    expect(isRetryable("VAL-006")).toBe(false);
  });

  it("refuses what would make a wrong body", () => {
    const anyBody = errorBody as (code: string, context?: string) => unknown;
    expect(() => anyBody("VAL-003")).toThrow(TypeError);
    expect(() => anyBody("MISSING_PROPERTY")).toThrow(TypeError);
    expect(() => anyBody("INV-013", "re]play")).toThrow(TypeError);
    expect(() => anyBody("NO_SUCH_CODE")).toThrow(TypeError);
    expect(() => statusOf("toString" as ErrorCode)).toThrow(TypeError);
    expect(isErrorCode("toString")).toBe(false);
  });

  it("builds the rate limit body", () => {
    expect(rateLimitedBody({ limit: 100, remaining: 0, reset: 1767225600 })).toEqual({
      error: "Rate limit exceeded",
      limit: 100,
      remaining: 0,
      reset: 1767225600,
    });
  });
});

describe("signal validation codes", () => {
  const source = read("../../src/signals/validate.ts");
  const emitted = [...new Set([...source.matchAll(/"(VAL-\d{3})"/g)].map((m) => m[1] ?? ""))].sort();

  it("lists every VAL code validate.ts can emit, and no other", () => {
    expect(emitted).toEqual([
      "VAL-001",
      "VAL-003",
      "VAL-004",
      "VAL-006",
      "VAL-007",
      "VAL-008",
      "VAL-009",
      "VAL-010",
      "VAL-011",
      "VAL-012",
      "VAL-013",
      "VAL-014",
    ]);
    expect(CODES.filter((c) => c.startsWith("VAL-")).sort()).toEqual(emitted);
    for (const code of emitted) {
      expect(isErrorCode(code), code).toBe(true);
      if (isErrorCode(code)) expect(ERROR_CODES[code].carrier, code).toBe("details");
    }
  });

  it("wraps the validator's output, every failure at once, in the 422 body", () => {
    const validate = createSignalValidator({
      type: "object",
      properties: {
        amount: { type: "number", minimum: 0 },
        currency: { type: "string", enum: ["USD", "EUR", "GBP"] },
        kyc_verified: { type: "boolean" },
        count: { type: "integer" },
        note: { type: "string", pattern: "^[a-z]+$" },
        client_version: { type: "string", format: "semver" },
        client_ip: { type: "string", format: "ip" },
      },
      required: ["amount", "currency", "kyc_verified"],
      additionalProperties: false,
    });
    const seen = new Set<string>();
    for (const signals of [
      { amount: -5, currency: "YEN", kyc: true, count: 1.5, note: "A", client_version: "v2.4.0", client_ip: "010.0.0.1" },
      { amount: "1", currency: 1, kyc_verified: "yes" },
      [1],
    ]) {
      const r = validate(signals);
      expect(r.valid).toBe(false);
      if (r.valid) continue;
      const body = signalValidationBody(r.errors);
      expect(body.error).toBe("Signal validation failed");
      expect(body.details).toEqual(r.errors);
      for (const d of body.details) seen.add(d.code);
      expect(signalValidationBody(r.errors, "SIGNALS_VALIDATION_FAILED").error).toBe("Signals validation failed");
    }
    expect([...seen].sort()).toEqual(emitted);
    for (const code of seen) expect(isErrorCode(code), code).toBe(true);
  });
});
