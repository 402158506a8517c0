/** Free TCP ports on 127.0.0.1, never the same one twice in this process (never the docs' fixed 8080 or 8081). */
import { createServer } from "node:net";

const given = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    if (!given.has(port)) {
      given.add(port);
      return port;
    }
  }
}

/** Both surfaces' ports, as the environment a sidecar of the block is given. */
export async function sidecarPorts(): Promise<{ readonly a: number; readonly b: number; readonly env: Record<string, string> }> {
  const a = await freePort();
  const b = await freePort();
  return { a, b, env: { SERVICE_PORT: String(a), SERVICE_B_PORT: String(b) } };
}
