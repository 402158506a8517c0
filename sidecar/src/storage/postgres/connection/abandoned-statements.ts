/**
 * A commit waiting on a synchronous standby that does not answer (docs/fleet.md, "Failure behaviour"), on every
 * connection of the pool (pool.ts). Such a wait reads neither `statement_timeout` nor its socket, so:
 * - ABANDONED IS CANCELED. A connection closed while a statement is under way (the sidecar gave up on it) first has a
 *   cancel request sent for its backend (the protocol's CancelRequest, which through a pooler reaches the same server
 *   connection): the wait ends, the commit stays local, and the backend, its client gone, exits instead of holding its
 *   row locks and a connection slot for good. The statement was already failed (503, in doubt): never a 200.
 * - A WARNING IS A DOUBT. A wait canceled while the sidecar still waits answers the statement as committed with a
 *   WARNING (committed here, maybe not on the standby); writ's statements raise no warning otherwise, so any WARNING
 *   fails the statement at once (StoreUnavailableError, 503), never a 200.
 * Both read node-postgres internals (docs/storage-engines.md, "What the PostgreSQL engine relies on in node-postgres").
 */
import { connect } from "node:net";
import type pg from "pg";

/** What node-postgres keeps of a connection that this module reads. */
interface ClientInternals {
  readonly host: string;
  readonly port: number;
  readonly processID: number | null;
  readonly secretKey: number | null;
  _getActiveQuery(): { callback?: (error: Error | null, result?: unknown) => void } | null;
}

/** The protocol's CancelRequest code (PostgreSQL frontend/backend protocol 3.0). */
const CANCEL_REQUEST_CODE = 80877102;
/** How long a cancel request's own connection may take: it is sent and forgotten. */
const CANCEL_CONNECT_MS = 5_000;

/** Whether `client` has a statement under way: sent, and not answered to the end (ReadyForQuery) yet. */
export function statementUnderWay(client: pg.ClientBase): boolean {
  return (client as unknown as ClientInternals)._getActiveQuery() !== null;
}

/** The pool's client class (the header's two rules) over `Base`. */
export function cancelingClient(Base: typeof pg.Client): typeof pg.Client {
  return class CancelingClient extends Base {
    constructor(config?: pg.ClientConfig) {
      super(config);
      this.on("notice", (notice) => {
        if (notice.severity === "WARNING") failInDoubt(this, notice.message ?? "");
      });
    }

    override end(): Promise<void>;
    override end(callback: (err: Error) => void): void;
    override end(callback?: (err: Error) => void): Promise<void> | void {
      if (statementUnderWay(this)) cancelBackend(this as unknown as ClientInternals);
      return callback === undefined ? super.end() : super.end(callback);
    }
  };
}

/** Fails the statement under way on `client` with the warning, once; its own answer, when it comes, changes nothing. */
function failInDoubt(client: pg.ClientBase, warning: string): void {
  const statement = (client as unknown as ClientInternals)._getActiveQuery();
  const callback = statement?.callback;
  if (statement === null || callback === undefined) return;
  statement.callback = () => undefined;
  callback(new Error(`the database answered with a warning, so whether the statement took effect is in doubt: ${warning}`));
}

/** Sends the CancelRequest of `client`'s backend and forgets it: its failure leaves the statement to its own fate. */
function cancelBackend(client: ClientInternals): void {
  if (client.processID === null || client.secretKey === null) return;
  const request = Buffer.alloc(16);
  request.writeInt32BE(16, 0);
  request.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  request.writeInt32BE(client.processID, 8);
  request.writeInt32BE(client.secretKey, 12);
  const socket = client.host.startsWith("/")
    ? connect({ path: `${client.host}/.s.PGSQL.${client.port}` })
    : connect({ host: client.host, port: client.port });
  socket.on("error", () => undefined);
  socket.setTimeout(CANCEL_CONNECT_MS, () => socket.destroy());
  socket.once("connect", () => socket.end(request));
}
