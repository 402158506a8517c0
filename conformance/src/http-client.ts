/**
 * The suite's only way to reach an implementation: HTTP over undici. Requests go out exactly as the case built them
 * (raw bytes, chunked or with a content-length, any Authorization header or none); answers come back as status,
 * headers and the raw body bytes, so the strict parse and signature checks see exactly what was sent.
 *
 * Bodies a server may refuse before reading them (chunked, or larger than 64 KiB) go over node:http instead: a
 * server that answers 413 early and closes the connection makes undici fail the request with EPIPE or ECONNRESET
 * while the answer is already on the socket; node:http delivers the answer and lets the late write error be ignored.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { Agent, request } from "undici";

export interface OutgoingRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  /** Send the body with `Transfer-Encoding: chunked` (no content-length) in 1 KB chunks. */
  readonly chunked?: boolean;
}

export interface HttpAnswer {
  readonly status: number;
  /** Lowercase names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly bytes: Buffer;
}

/** The request never got an answer: connection refused, reset, timed out. */
export class NetworkError extends Error {
  override readonly name = "NetworkError";
}

const CHUNK = 1024;
/** Above this, a body may be refused unread: sent over node:http (see above). */
const EARLY_ANSWER_BYTES = 64 * 1024;

function headersOf(raw: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

/** A request whose answer may arrive before its body is written: the write error after an answer is ignored. */
function sendEarlyAnswerable(url: URL, outgoing: OutgoingRequest, timeoutMs: number): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    let answered = false;
    const headers: Record<string, string | number> = { ...outgoing.headers };
    if (outgoing.chunked === true) headers["transfer-encoding"] = "chunked";
    else headers["content-length"] = outgoing.body?.length ?? 0;
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(url, { method: outgoing.method, headers, timeout: timeoutMs }, (res: IncomingMessage) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on("data", (part: Buffer) => parts.push(part));
      res.once("end", () => resolve({ status: res.statusCode ?? 0, headers: headersOf(res.headers), bytes: Buffer.concat(parts) }));
      res.once("error", reject);
    });
    req.once("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", (e) => {
      if (!answered) reject(e);
    });
    const body = outgoing.body ?? Buffer.alloc(0);
    if (outgoing.chunked === true) for (let i = 0; i < body.length; i += CHUNK) req.write(body.subarray(i, i + CHUNK));
    else req.write(body);
    req.end();
  });
}

/** The innermost cause's message, with its code: undici wraps the socket error that says what happened. */
export function describeNetworkError(e: unknown): string {
  let current: unknown = e;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  const error = current instanceof Error ? current : new Error(String(current));
  const code = (error as { code?: unknown }).code;
  const message = error.message === "" ? String(code ?? error.name) : error.message;
  return typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message;
}

export class HttpClient {
  readonly #origin: string;
  readonly #prefix: string;
  readonly #agent: Agent;
  readonly #timeoutMs: number;

  /** @param baseUrl `http(s)://host[:port][/prefix]`; request paths are appended to the prefix */
  constructor(baseUrl: string, options: { readonly timeoutMs?: number } = {}) {
    const url = new URL(baseUrl);
    this.#origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, "");
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    // No cap on connections: a repeat step's concurrency must reach the server as concurrency.
    this.#agent = new Agent({ keepAliveTimeout: 4_000, headersTimeout: this.#timeoutMs, bodyTimeout: this.#timeoutMs });
  }

  /** @throws NetworkError when no answer arrives */
  async send(outgoing: OutgoingRequest): Promise<HttpAnswer> {
    const url = `${this.#origin}${this.#prefix}${outgoing.path}`;
    try {
      if (outgoing.chunked === true || (outgoing.body?.length ?? 0) > EARLY_ANSWER_BYTES) {
        return await sendEarlyAnswerable(new URL(url), outgoing, this.#timeoutMs);
      }
      const answer = await request(url, {
        method: outgoing.method as "GET",
        headers: outgoing.headers,
        ...(outgoing.body === undefined ? {} : { body: outgoing.body }),
        dispatcher: this.#agent,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      return { status: answer.statusCode, headers: headersOf(answer.headers), bytes: Buffer.from(await answer.body.arrayBuffer()) };
    } catch (e) {
      throw new NetworkError(`${outgoing.method} ${outgoing.path}: no answer: ${describeNetworkError(e)}`);
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
