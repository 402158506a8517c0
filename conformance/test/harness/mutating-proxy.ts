/**
 * A mutating HTTP proxy in front of a real server: it forwards every request and answer unchanged, except where
 * its one `Mutation` rewrites the request, answers in the server's place, or rewrites the answer. The suite is run
 * through it to show that it catches each broken behaviour, while the product carries no test hooks.
 *
 * Fidelity where the suite tests the wire: a chunked request is forwarded chunked, an oversized one in full (the
 * server, not the proxy, must refuse it), headers as sent (hop-by-hop headers aside).
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ProxiedRequest {
  readonly method: string;
  /** Path and query, as received. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  readonly chunked: boolean;
}

export interface ProxiedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface Mutation {
  readonly name: string;
  /** Rewrites the request before it is forwarded, or answers it in the server's place. */
  readonly request?: (request: ProxiedRequest) => ProxiedRequest | ProxiedAnswer;
  /** Rewrites the server's answer. */
  readonly answer?: (request: ProxiedRequest, answer: ProxiedAnswer) => ProxiedAnswer;
}

export interface RunningProxy {
  readonly url: string;
  /** Requests forwarded or answered so far. */
  readonly seen: number;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "proxy-connection",
  "upgrade",
  "te",
  "trailer",
]);

function plainHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    stream.on("data", (part: Buffer) => parts.push(part));
    stream.once("end", () => resolve(Buffer.concat(parts)));
    stream.once("error", reject);
  });
}

function isAnswer(value: ProxiedRequest | ProxiedAnswer): value is ProxiedAnswer {
  return "status" in value;
}

/** Forwards like the suite's client does: a server may answer before the body is written (413), which is fine. */
function forward(upstream: URL, request: ProxiedRequest): Promise<ProxiedAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const headers: Record<string, string | number> = { ...request.headers };
    if (request.chunked) headers["transfer-encoding"] = "chunked";
    else if (request.body.length > 0 || !["GET", "HEAD"].includes(request.method)) headers["content-length"] = request.body.length;
    const req = httpRequest(new URL(request.path, upstream), { method: request.method, headers }, (res) => {
      answered = true;
      void readAll(res).then((body) => resolve({ status: res.statusCode ?? 502, headers: plainHeaders(res.headers), body }), reject);
    });
    req.on("error", (e) => {
      if (!answered) reject(e);
    });
    if (request.chunked) for (let i = 0; i < request.body.length; i += 1024) req.write(request.body.subarray(i, i + 1024));
    else req.write(request.body);
    req.end();
  });
}

export async function startMutatingProxy(upstreamUrl: string, mutation: Mutation): Promise<RunningProxy> {
  const upstream = new URL(upstreamUrl);
  let seen = 0;
  const server: Server = createServer((incoming, outgoing) => {
    void (async () => {
      seen++;
      const received: ProxiedRequest = {
        method: incoming.method ?? "GET",
        path: incoming.url ?? "/",
        headers: plainHeaders(incoming.headers),
        body: await readAll(incoming),
        chunked: /chunked/i.test(String(incoming.headers["transfer-encoding"] ?? "")),
      };
      const rewritten = mutation.request?.(received) ?? received;
      let answer = isAnswer(rewritten) ? rewritten : await forward(upstream, rewritten);
      if (!isAnswer(rewritten) && mutation.answer !== undefined) answer = mutation.answer(rewritten, answer);
      outgoing.writeHead(answer.status, { ...answer.headers, "content-length": answer.body.length });
      outgoing.end(answer.body);
    })().catch((e: unknown) => {
      outgoing.writeHead(502, { "content-type": "text/plain" });
      outgoing.end(`proxy: ${e instanceof Error ? e.message : String(e)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get seen() {
      return seen;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The answer's body as JSON, or undefined when it is not JSON. */
export function jsonOf(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** A request or answer with a new JSON body; an answer also gets the JSON content type (the length follows the body). */
export function withJson<T extends ProxiedAnswer | ProxiedRequest>(message: T, value: unknown): T {
  const body = Buffer.from(JSON.stringify(value));
  return "status" in message
    ? { ...message, headers: { ...message.headers, "content-type": "application/json; charset=utf-8" }, body }
    : { ...message, body };
}
