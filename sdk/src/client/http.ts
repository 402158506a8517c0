/**
 * The clients' one way to talk to a surface: JSON over undici, Bearer authentication (spec 5), a timeout per
 * attempt, retries by the rules of `retry.ts`, and every error answer as a `WritApiError`. Network failures,
 * timeouts and aborts are thrown as undici and node throw them (spec 7: not wrapped).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Agent, request, type Dispatcher } from "undici";
import { WritApiError } from "../errors.js";
import { DEFAULT_RETRY, retryDelay, type RetryOptions } from "./retry.js";

export interface ClientOptions {
  /** Where the surface listens, e.g. `http://127.0.0.1:8080`; a path prefix is kept (`https://gateway/writ`). */
  readonly baseUrl: string | URL;
  /** `SERVICE_API_KEY`, sent as `Authorization: Bearer <apiKey>`. */
  readonly apiKey: string;
  /** Per attempt, from sending the request to reading the whole answer; default 10,000 ms. */
  readonly timeoutMs?: number;
  readonly retry?: RetryOptions;
  /** An undici dispatcher (Agent, Pool, ProxyAgent, MockAgent...); default an Agent of the client's own, closed by `close()`. */
  readonly dispatcher?: Dispatcher;
}

/** Per call: cancel it, or give it another timeout than the client's. */
export interface CallOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;

export interface HttpRequest {
  readonly method: "GET" | "POST";
  /** Already encoded, starting with `/`. */
  readonly path: string;
  readonly query?: URLSearchParams;
  readonly body?: unknown;
  /** A non-2xx answer that is a result, not an error (`POST /policies/validate` answers 404 `{valid: false, errors}`). */
  readonly result?: (status: number, body: unknown) => boolean;
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** An error answer's body: JSON when it parses, else its text (a proxy's error page), null when empty. */
function errorBodyOf(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function headerOf(headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export class HttpTransport {
  readonly #base: string;
  readonly #authorization: string;
  readonly #timeoutMs: number;
  readonly #retry: Required<RetryOptions>;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;

  constructor(options: ClientOptions) {
    const base = new URL(String(options.baseUrl));
    if (base.protocol !== "http:" && base.protocol !== "https:")
      throw new TypeError(`baseUrl must be http or https, not \`${base.protocol}\``);
    this.#base = base.href.replace(/\/+$/, "");
    this.#authorization = `Bearer ${options.apiKey}`;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher = options.dispatcher ?? new Agent();
  }

  /** @throws WritApiError for an error answer, once retries (429, 5xx) are spent */
  async send(req: HttpRequest, call: CallOptions = {}): Promise<HttpAnswer> {
    for (let attempt = 0; ; attempt++) {
      const answer = await this.#attempt(req, call);
      if ((answer.status >= 200 && answer.status < 300) || req.result?.(answer.status, answer.body)) {
        return { status: answer.status, body: answer.body };
      }
      const delay = retryDelay(this.#retry, attempt, answer, Date.now());
      if (delay === null) throw new WritApiError(answer.status, answer.body);
      await sleep(delay, undefined, call.signal ? { signal: call.signal } : {});
    }
  }

  async #attempt(req: HttpRequest, call: CallOptions): Promise<{ status: number; body: unknown; retryAfter: string | undefined }> {
    const timeout = AbortSignal.timeout(call.timeoutMs ?? this.#timeoutMs);
    const query = req.query?.toString();
    const response = await request(`${this.#base}${req.path}${query ? `?${query}` : ""}`, {
      method: req.method,
      dispatcher: this.#dispatcher,
      signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout,
      headers: {
        authorization: this.#authorization,
        accept: "application/json",
        ...(req.body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
    });
    const text = await response.body.text();
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    // A success that is not JSON is a broken server or proxy: JSON.parse's SyntaxError says so, unwrapped.
    const body = ok ? (JSON.parse(text) as unknown) : errorBodyOf(text);
    return { status: response.statusCode, body, retryAfter: headerOf(response.headers, "retry-after") };
  }

  /**
   * The lines of a GET answer in NDJSON, each parsed, read as they arrive: an answer of any length is never held whole.
   * Not retried (a stream half read cannot be resumed); `call.timeoutMs` bounds the wait for the answer's start only.
   * @throws WritApiError for an error answer
   */
  async *lines(path: string, call: CallOptions = {}, query?: URLSearchParams): AsyncGenerator<unknown> {
    const started = new AbortController();
    const timer = setTimeout(
      () => started.abort(new DOMException("the answer did not start in time", "TimeoutError")),
      call.timeoutMs ?? this.#timeoutMs,
    );
    const text = query?.toString();
    let response: Dispatcher.ResponseData;
    try {
      response = await request(`${this.#base}${path}${text ? `?${text}` : ""}`, {
        method: "GET",
        dispatcher: this.#dispatcher,
        signal: call.signal ? AbortSignal.any([call.signal, started.signal]) : started.signal,
        headers: { authorization: this.#authorization, accept: "application/x-ndjson" },
      });
    } finally {
      clearTimeout(timer);
    }
    if (response.statusCode < 200 || response.statusCode >= 300)
      throw new WritApiError(response.statusCode, errorBodyOf(await response.body.text()));
    let rest = "";
    for await (const chunk of response.body) {
      rest += (chunk as Buffer).toString("utf8");
      let end: number;
      while ((end = rest.indexOf("\n")) >= 0) {
        const line = rest.slice(0, end);
        rest = rest.slice(end + 1);
        if (line !== "") yield JSON.parse(line) as unknown;
      }
    }
    if (rest !== "") yield JSON.parse(rest) as unknown;
  }

  /** The body of a GET answer. @throws WritApiError */
  async get<T>(path: string, call: CallOptions | undefined, query?: URLSearchParams): Promise<T> {
    return (await this.send({ method: "GET", path, ...(query ? { query } : {}) }, call)).body as T;
  }

  /** The body of a POST answer. @throws WritApiError */
  async post<T>(path: string, body: unknown, call: CallOptions | undefined): Promise<T> {
    return (await this.send({ method: "POST", path, body }, call)).body as T;
  }

  /** Closes the client's own connection pool; a dispatcher given in the options is the caller's to close. */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }
}
