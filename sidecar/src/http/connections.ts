/**
 * Connection limits of one surface: without them, anyone who can reach the port holds sockets open until
 * the process runs out of file descriptors, and then nobody is served (about 21,000 idle sockets did it).
 *
 * - `headersTimeoutMs` / `requestTimeoutMs`: a request's headers, and the whole request, must arrive in time (Node's
 *   `headersTimeout` / `requestTimeout`, checked every `CHECK_INTERVAL_MS`); 408 otherwise.
 * - `keepAliveTimeoutMs`: an idle keep-alive connection is closed this long after its last answer.
 * - `idleTimeoutMs`: a socket with no traffic at all for this long is closed, including one that never sent a request.
 * - `maxSockets`: at most this many open sockets. INVARIANT (a newcomer is served): at the cap, a new connection
 *   evicts the oldest socket with no request in flight, so a flood of idle sockets cannot lock out a fresh client;
 *   only when every socket has a request in flight is the newcomer closed.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";

export interface ConnectionLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxSockets: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 30_000,
  idleTimeoutMs: 60_000,
  maxSockets: 4_096,
};

/** How often Node checks the headers and request timeouts (its default is 30 s, longer than the timeouts). */
export const CHECK_INTERVAL_MS = 1_000;

/** The socket cap with eviction of idle sockets (see the header). */
export function capSockets(server: Server, maxSockets: number): void {
  // Insertion order: the first is the oldest.
  const open = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    if (open.size <= maxSockets) return;
    for (const candidate of open) {
      if (candidate !== socket && !hasRequestInFlight(candidate)) {
        open.delete(candidate);
        candidate.destroy();
        return;
      }
    }
    open.delete(socket);
    socket.destroy();
  });
}

/**
 * Node's http server attaches the response being written to its socket (`_httpMessage`) from the moment a request's
 * headers are parsed until the response has finished; Node's own `closeIdleConnections` tells idle sockets by it. Read
 * here instead of counting requests with listeners of our own, which cost every request.
 */
function hasRequestInFlight(socket: Socket): boolean {
  const response = (socket as Socket & { _httpMessage?: { finished?: boolean } | null })._httpMessage;
  return response !== undefined && response !== null && response.finished !== true;
}
