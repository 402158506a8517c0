/**
 * One sidecar process: the context (LMDB, keys, authorizer) and the surfaces listening on it. `close()` is the
 * graceful shutdown: stop accepting, let requests in flight finish (new ones get 503), then flush and close LMDB, so
 * nothing a client was told is lost.
 */
import type { FastifyInstance } from "fastify";
import type { SidecarConfig } from "./config.js";
import { openContext, type ContextOptions, type SidecarContext } from "./context.js";
import { createMetrics } from "./metrics.js";
import { lifecycleLog, type Logger } from "./observability/logger.js";
import { OPENAPI_TEXTS } from "./openapi-documents.js";
import { buildSurfaceA } from "./surface-a/app.js";
import { buildSurfaceB } from "./surface-b/app.js";

export interface RunningSidecar {
  readonly context: SidecarContext;
  /** `http://host:port` of each listening surface. */
  readonly urls: { readonly a: string | null; readonly b: string | null };
  close(): Promise<void>;
}

/**
 * Listens, and says where: `Surface A listening on http://…`, what a supervisor waits for. Fastify writes that line at
 * info; `quiet`: the level hides it, and the lifecycle log (written whatever the level) writes it instead.
 */
async function listen(app: FastifyInstance, name: string, host: string, port: number, quiet: Logger | null): Promise<string> {
  await app.listen({ host, port, listenTextResolver: (address) => `${name} listening on ${address}` });
  const address = app.server.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${bound}`;
  quiet?.info(`${name} listening on ${url}`);
  return url;
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

/**
 * Opens the context and starts both surfaces on it; the start-up notices and where each surface listens go to the
 * lifecycle log. `options.log`: the root logger (by default one on stdout at SERVICE_LOG_LEVEL).
 */
export async function startSidecar(config: SidecarConfig, options: ContextOptions = {}): Promise<RunningSidecar> {
  const context = await openContext(config, options);
  const lifecycle = lifecycleLog(context.log);
  const quiet = context.log.isLevelEnabled("info") ? null : lifecycle;
  for (const notice of context.notices) lifecycle.info(notice);
  const generated = context.generatedApiKey;
  // The one time the generated key is shown: a field of this line (docs/sidecar.md, "Logs").
  if (generated)
    lifecycle.info(
      { apiKey: generated.key, path: generated.path },
      `generated an API key, kept in ${generated.path}; it is shown this once, in this line's apiKey`,
    );
  const metrics = createMetrics(context);
  const apps: FastifyInstance[] = [];
  try {
    let a: string | null = null;
    if (config.portA !== null) {
      const surfaceA = await buildSurfaceA(context, metrics, OPENAPI_TEXTS);
      apps.push(surfaceA);
      a = await listen(surfaceA, "Surface A", config.host, config.portA, quiet);
    }
    // Surface B: its own listener on the same context; drained with Surface A on close.
    let b: string | null = null;
    if (config.portB !== null) {
      const surfaceB = buildSurfaceB(context, metrics);
      apps.push(surfaceB);
      b = await listen(surfaceB, "Surface B", config.host, config.portB, quiet);
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
