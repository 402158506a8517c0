/**
 * Answers for what goes wrong below the routes, in the error table's shape `{"error": "..."}` like every other
 * answer: a request line or header Node cannot parse (bare LF, a bad Content-Length), headers over Node's
 * limit, a request whose headers or body arrive too slowly, an `Expect` other than 100-continue, and CONNECT. Node and
 * fastify answer these with their own bodies, an empty one (417), or none at all (CONNECT drops the connection).
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { errorBody, statusOf, type BodyErrorCode } from "@writ/runtime";
import { JSON_TYPE } from "./json-text.js";

type BelowRoutes = Extract<
  BodyErrorCode,
  "BAD_REQUEST" | "HEADERS_TOO_LARGE" | "REQUEST_TIMEOUT" | "EXPECTATION_FAILED" | "METHOD_NOT_ALLOWED"
>;

/** A whole HTTP/1.1 response, closing the connection: after a parse error nothing more can be read from it. */
function rawResponse(code: BelowRoutes): string {
  const status = statusOf(code);
  const body = JSON.stringify(errorBody(code));
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

function codeOf(error: NodeJS.ErrnoException): BelowRoutes {
  if (error.code === "HPE_HEADER_OVERFLOW") return "HEADERS_TOO_LARGE";
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT" || error.code === "ERR_HTTP_HEADERS_TIMEOUT") return "REQUEST_TIMEOUT";
  return "BAD_REQUEST";
}

/** fastify's `clientErrorHandler`: Node's `clientError` event of a socket whose request could not be parsed. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection has nobody to answer.
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  if (socket.writable) closeWith(socket, rawResponse(codeOf(error)));
  else socket.destroy();
}

/** Writes `response` and closes; destroyed once written, or after a second if the peer does not read it. */
function closeWith(socket: Duplex, response: string): void {
  socket.end(response, () => socket.destroy());
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/** Installs the answers Node gives without a route: an unsupported `Expect` (417) and CONNECT (405). */
export function answerBelowRoutes(server: Server): void {
  server.on("checkExpectation", (_request: IncomingMessage, response: ServerResponse) => {
    const body = JSON.stringify(errorBody("EXPECTATION_FAILED"));
    response.writeHead(statusOf("EXPECTATION_FAILED"), {
      "content-type": JSON_TYPE,
      "content-length": Buffer.byteLength(body),
      connection: "close",
    });
    response.end(body);
  });
  server.on("connect", (_request: IncomingMessage, socket: Duplex) => closeWith(socket, rawResponse("METHOD_NOT_ALLOWED")));
}
