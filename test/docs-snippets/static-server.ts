/**
 * The bundle source's static file server, on 127.0.0.1 in place of the docs' https://bundles.example.com: GET of the
 * files of a directory under a URL prefix, read at each request (the block publishes them after the server started).
 */
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { join, normalize } from "node:path";

export interface StaticServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  close(): Promise<void>;
}

/** Serves `dir` at `prefix` (`/site/`); anything else is 404. */
export async function serveDirectory(prefix: string, dir: string): Promise<StaticServer> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const relative = normalize(path.slice(prefix.length));
    if (req.method !== "GET" || !path.startsWith(prefix) || relative.startsWith("..")) {
      res.writeHead(404).end();
      return;
    }
    readFile(join(dir, relative)).then(
      (bytes) => res.writeHead(200, { "content-type": "application/json" }).end(bytes),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
