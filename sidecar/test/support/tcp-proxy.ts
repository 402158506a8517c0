/**
 * A TCP proxy between a client and a server (node:net), for tests that cut the connection under load: `cut()` destroys
 * every connection and refuses new ones (closed at once) until `heal()`; `blackHole()` makes the server a black hole
 * until `heal()`: the connections stay open and nothing passes either way, and new ones are accepted and never answered
 * (`heal()` then destroys them, as the network's timeouts would).
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  readonly port: number;
  cut(): void;
  blackHole(): void;
  heal(): void;
  /** Client connections open now (forwarded or held by the black hole). */
  openConnections(): number;
  /** Client connections accepted since the proxy started. */
  acceptedConnections(): number;
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket | null;
}

export async function startTcpProxy(targetPort: number, targetHost = "127.0.0.1"): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<Pair>();
  let mode: "open" | "refusing" | "black-hole" = "open";
  let accepted = 0;
  const track = (pair: Pair): void => {
    pairs.add(pair);
    for (const socket of [pair.client, pair.upstream]) {
      if (socket === null) continue;
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      // A cut connection errors on both sides: expected here.
      socket.on("error", () => undefined);
    }
    pair.client.once("close", () => pairs.delete(pair));
  };
  const swallow = (pair: Pair): void => {
    pair.client.unpipe();
    pair.upstream?.unpipe();
    pair.client.pause();
    pair.upstream?.pause();
  };
  const server: Server = createServer((client) => {
    accepted += 1;
    if (mode === "refusing") {
      client.destroy();
      return;
    }
    if (mode === "black-hole") {
      const pair = { client, upstream: null };
      track(pair);
      swallow(pair);
      return;
    }
    const upstream = createConnection({ host: targetHost, port: targetPort });
    track({ client, upstream });
    client.pipe(upstream);
    upstream.pipe(client);
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    cut: () => {
      mode = "refusing";
      for (const socket of sockets) socket.destroy();
    },
    blackHole: () => {
      mode = "black-hole";
      for (const pair of pairs) swallow(pair);
    },
    heal: () => {
      if (mode === "black-hole") for (const socket of sockets) socket.destroy();
      mode = "open";
    },
    openConnections: () => pairs.size,
    acceptedConnections: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
