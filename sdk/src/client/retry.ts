/**
 * When the clients retry (spec 7): a 429 and any 5xx, with backoff; nothing else. 400, 401, 413 and every 422
 * (a replay's INV-013 included: the same executionId blocks again) would only fail the same way, and a network
 * failure is the caller's to judge (the request may have been executed), so neither is retried.
 *
 * A retry waits what the service asks for when it says so (`retry-after`, or the 429 body's `reset`), else an
 * exponential backoff with jitter. A wait longer than `maxDelayMs` is not waited out: the error is thrown at once,
 * so a rate-limited caller is not blocked for up to a minute without knowing.
 */
export interface RetryOptions {
  /** Attempts after the first; default 2. `0` turns retries off. */
  readonly retries?: number;
  /** The first backoff, doubled on each retry; default 200 ms. */
  readonly baseDelayMs?: number;
  /** The longest single wait; default 10,000 ms. */
  readonly maxDelayMs?: number;
}

export const DEFAULT_RETRY = { retries: 2, baseDelayMs: 200, maxDelayMs: 10_000 } as const satisfies Required<RetryOptions>;

function isRetryable(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/** What a retry decision reads of an error answer. */
export interface FailedAnswer {
  readonly status: number;
  /** The `retry-after` header: delay seconds or an HTTP date. */
  readonly retryAfter: string | undefined;
  readonly body: unknown;
}

/** Milliseconds the service asked to wait, or null when it did not say. */
function requestedWait(answer: FailedAnswer, now: number): number | null {
  const header = answer.retryAfter?.trim();
  if (header !== undefined && header !== "") {
    if (/^\d+$/.test(header)) return Number(header) * 1000;
    const date = Date.parse(header);
    if (!Number.isNaN(date)) return date - now;
  }
  const body = answer.body;
  if (answer.status === 429 && typeof body === "object" && body !== null && typeof (body as { reset?: unknown }).reset === "number") {
    // Spec 7: `reset` is the Unix time (seconds) at which the rate-limit window resets.
    return (body as { reset: number }).reset * 1000 - now;
  }
  return null;
}

/**
 * Milliseconds to wait before attempt `attempt + 1` (`attempt` counts from 0), or null: do not retry, throw.
 * `random` is injectable for tests.
 */
export function retryDelay(
  options: Required<RetryOptions>,
  attempt: number,
  answer: FailedAnswer,
  now: number,
  random: () => number = Math.random,
): number | null {
  if (!isRetryable(answer.status) || attempt >= options.retries) return null;
  const requested = requestedWait(answer, now);
  if (requested !== null) return requested > options.maxDelayMs ? null : Math.max(0, requested);
  // Half fixed, half random: spreads clients that failed together without ever retrying at once.
  const backoff = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** attempt);
  return backoff / 2 + random() * (backoff / 2);
}
