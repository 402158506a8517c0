/**
 * A TCP proxy between a client and a server (node:net), for tests that cut the connection under load: `cut()` destroys
 * every connection and refuses new ones (closed at once) until `heal()`; `blackHole()` makes the server a black hole
 * until `heal()`: the connections stay open and nothing passes either way, and new ones are accepted and never answered
 * (`heal()` then destroys them, as the network's timeouts would); `slow(ms)` forwards again, each answer of the server
 * on a connection made from then on delayed by `ms` (a slow network or server), until `heal()`.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  readonly port: number;
  cut(): void;
  blackHole(): void;
  slow(ms: number): void;
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
  /** How long the server's answers are held on connections made now (`slow`). */
  let latencyMs = 0;
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
    if (latencyMs === 0) upstream.pipe(client);
    else {
      // Same delay for every chunk: the timers fire, and the chunks arrive, in order.
      const delay = latencyMs;
      upstream.on("data", (chunk: Buffer) => setTimeout(() => client.destroyed || client.write(chunk), delay));
    }
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  /** Forwarding again (a black hole's connections destroyed, as the network's timeouts would), answers delayed `ms`. */
  const forward = (ms: number): void => {
    if (mode === "black-hole") for (const socket of sockets) socket.destroy();
    mode = "open";
    latencyMs = ms;
  };
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
    slow: forward,
    heal: () => forward(0),
    openConnections: () => pairs.size,
    acceptedConnections: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
