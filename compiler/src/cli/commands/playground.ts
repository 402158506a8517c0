import { existsSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import sirv from "sirv";
import { CliError, EXIT, type CliIo } from "../io.js";

/**
 * What the page may do: run its own script (ajv compiles the signals schema to a function, hence 'unsafe-eval'), use
 * its own and CodeMirror's inline styles, and nothing else; it fetches nothing, so a policy never leaves the browser.
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-cache",
};

export interface PlaygroundServer {
  /** Where the page is, e.g. `http://127.0.0.1:8088/`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The built playground inside this package: `dist/playground` under the package root (the first directory above
 * this module with a package.json), whether this runs from dist/ or, in the repository's tests, from src/.
 */
export function playgroundRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new CliError("cannot find the @writ/compiler package this command belongs to");
    dir = parent;
  }
  return join(dir, "dist", "playground");
}

/** Serves the playground's static files from `root` on `host:port` (port 0: a free one); GET and HEAD only. */
export async function startPlaygroundServer(options: {
  readonly root: string;
  readonly port: number;
  readonly host: string;
}): Promise<PlaygroundServer> {
  if (!existsSync(join(options.root, "index.html")))
    throw new CliError(`the playground is not built (no \`${join(options.root, "index.html")}\`): run \`npm run build\``);
  const files = sirv(options.root, { dev: false, etag: true, setHeaders: (res) => setHeaders(res) });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res
        .writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" })
        .end("method not allowed: the playground is static files\n");
      return;
    }
    files(req, res, () => {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" }).end("not found\n");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        e.code === "EADDRINUSE"
          ? new CliError(`port ${options.port} on ${options.host} is in use: choose another with --port (0 picks a free one)`)
          : e,
      ),
    );
    server.listen(options.port, options.host, resolve);
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(":") ? `[${address}]` : address}:${port}/`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function setHeaders(res: ServerResponse): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
}

export interface PlaygroundRun {
  readonly io: CliIo;
  readonly port: number;
  readonly host: string;
  /** Open the page in the default browser. */
  readonly open: boolean;
}

/** `writ playground`: serves the page until SIGINT or SIGTERM, then exits 0. */
export async function runPlayground(run: PlaygroundRun): Promise<number> {
  const server = await startPlaygroundServer({ root: playgroundRoot(), port: run.port, host: run.host });
  run.io.out(`writ playground: ${server.url} (the compiler runs in the browser; Ctrl-C stops this server)`);
  if (run.open) {
    const { default: open } = await import("open");
    await open(server.url).catch((e: unknown) =>
      run.io.err(`writ: could not open a browser (${e instanceof Error ? e.message : String(e)}): open ${server.url} yourself`),
    );
  }
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.close();
  return EXIT.ok;
}
