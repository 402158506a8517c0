/** Free TCP ports on 127.0.0.1, never the same one twice in this process (never the docs' fixed 8080 or 8081). */
import { freePort as anyFreePort } from "../../sidecar/test/fleet/support.js";

const given = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await anyFreePort();
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
