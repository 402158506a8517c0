/**
 * One sidecar process: the context (LMDB, keys, authorizer) and the surfaces listening on it. `close()` is the
 * graceful shutdown: stop accepting, let requests in flight finish (new ones get 503), then flush and close LMDB, so
 * nothing a client was told is lost.
 */
import type { FastifyInstance } from "fastify";
import type { StoreHealth } from "@writ/runtime/lmdb";
import type { SidecarConfig } from "./config.js";
import { openContext, type SidecarContext } from "./context.js";
import { createMetrics } from "./metrics.js";
import { buildSurfaceA } from "./surface-a/app.js";
import { buildSurfaceB } from "./surface-b/app.js";

export interface RunningSidecar {
  readonly context: SidecarContext;
  /** `http://host:port` of each listening surface. */
  readonly urls: { readonly a: string | null; readonly b: string | null };
  close(): Promise<void>;
}

async function listen(app: FastifyInstance, host: string, port: number): Promise<string> {
  await app.listen({ host, port });
  const address = app.server.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  return `http://${host.includes(":") ? `[${host}]` : host}:${bound}`;
}

/**
 * Closes `app` once the requests in flight are answered, within `timeoutMs`; past it, open connections are cut so
 * shutdown cannot hang on a slow client. A keep-alive connection becomes idle once its request is answered: it is
 * closed then (checked every 50 ms), not left open until the timeout.
 */
async function drain(app: FastifyInstance, timeoutMs: number): Promise<void> {
  const idle = setInterval(() => app.server.closeIdleConnections(), 50);
  const timer = setTimeout(() => app.server.closeAllConnections(), timeoutMs);
  try {
    await app.close();
  } finally {
    clearInterval(idle);
    clearTimeout(timer);
  }
}

export async function startSidecar(config: SidecarConfig): Promise<RunningSidecar> {
  // Why `audit_db` turned false goes to the operator's log: stderr until a surface's logger exists, then that logger.
  let reportAuditError = (error: unknown): void => {
    process.stderr.write(`writ-sidecar: audit failure: ${error instanceof Error ? error.message : String(error)}\n`);
  };
  // Whether the store (the data dir, or the fleet's database) takes writes goes to the operator's log the same way.
  const store = config.store === "postgres" ? "database" : "data dir";
  let reportStoreHealth = (health: StoreHealth): void => {
    process.stderr.write(`writ-sidecar: ${store}: ${health.ok ? "takes writes again" : `failing: ${health.problem}`}\n`);
  };
  const context = await openContext(config, {
    onAuditError: (error) => reportAuditError(error),
    onStoreHealth: (health) => reportStoreHealth(health),
    onNotice: (message) => process.stderr.write(`writ-sidecar: ${message}\n`),
  });
  const metrics = createMetrics(() => context.bundles.health());
  const apps: FastifyInstance[] = [];
  try {
    let a: string | null = null;
    if (config.portA !== null) {
      const surfaceA = await buildSurfaceA(context, metrics);
      apps.push(surfaceA);
      reportAuditError = (error) => surfaceA.log.error({ err: error }, "audit failure: audit_db is false until audit writes succeed again");
      reportStoreHealth = (health) =>
        health.ok
          ? surfaceA.log.warn(`${store} takes writes again`)
          : surfaceA.log.error({ problem: health.problem }, `${store} failing writes: answering 503 until it takes them again`);
      a = await listen(surfaceA, config.host, config.portA);
    }
    // Surface B (issue 5): its own listener on the same context; drained with Surface A on close.
    let b: string | null = null;
    if (config.portB !== null) {
      const surfaceB = buildSurfaceB(context, metrics);
      apps.push(surfaceB);
      b = await listen(surfaceB, config.host, config.portB);
    }
    let closing: Promise<void> | null = null;
    return {
      context,
      urls: { a, b },
      close() {
        closing ??= (async () => {
          await Promise.all(apps.map((app) => drain(app, config.shutdownTimeoutMs)));
          await context.close();
        })();
        return closing;
      },
    };
  } catch (e) {
    await Promise.all(apps.map((app) => app.close()));
    await context.close();
    throw e;
  }
}
