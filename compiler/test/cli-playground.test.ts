/**
 * `writ playground`: the static server of the built playground (what it serves, with which headers, and what it
 * refuses) and the command's options. The page itself is tested in a browser (playground/test/browser.test.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { playgroundRoot, startPlaygroundServer, type PlaygroundServer } from "../src/cli/commands/playground.js";
import { runInRepo as run } from "./support/cli-run.js";

const repo = new URL("../../", import.meta.url).pathname;

/** A request with its path sent as written (no URL normalisation), as any client may send it. */
function get(
  url: string,
  path: string,
  method = "GET",
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(url), { path, method }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the playground's static server", () => {
  let dir: string;
  let server: PlaygroundServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "writ-playground-"));
    mkdirSync(join(dir, "site"));
    writeFileSync(join(dir, "site", "index.html"), "<!doctype html><title>writ playground</title>");
    writeFileSync(join(dir, "site", "playground.js"), "export {};");
    writeFileSync(join(dir, "site", "style.css"), "body {}");
    writeFileSync(join(dir, "secret.txt"), "not for the web");
    server = await startPlaygroundServer({ root: join(dir, "site"), port: 0, host: "127.0.0.1" });
  });

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("listens on the port it was given (0: a free one) and says where", () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(server.url).not.toMatch(/:0\/$/);
  });

  it("serves index.html at / and each file with its type, a content security policy that allows no request, and no-cache", async () => {
    const index = await get(server.url, "/");
    expect(index).toMatchObject({ status: 200, body: "<!doctype html><title>writ playground</title>" });
    expect(index.headers["content-type"]).toMatch(/^text\/html/);
    expect(index.headers["content-security-policy"]).toContain("connect-src 'none'");
    expect(index.headers["content-security-policy"]).toContain("script-src 'self' 'unsafe-eval'");
    expect(index.headers).toMatchObject({ "x-content-type-options": "nosniff", "cache-control": "no-cache" });
    expect((await get(server.url, "/playground.js")).headers["content-type"]).toMatch(/^text\/javascript|^application\/javascript/);
    expect((await get(server.url, "/style.css")).headers["content-type"]).toMatch(/^text\/css/);
  });

  it("answers 404 for what is not there, including paths out of its directory", async () => {
    for (const path of ["/missing.js", "/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt"]) {
      const r = await get(server.url, path);
      expect({ path, status: r.status, leaked: r.body.includes("not for the web") }).toEqual({ path, status: 404, leaked: false });
    }
  });

  it("answers 405 to anything but GET and HEAD", async () => {
    const r = await get(server.url, "/", "POST");
    expect(r.status).toBe(405);
    expect(r.headers["allow"]).toBe("GET, HEAD");
    expect((await get(server.url, "/", "HEAD")).status).toBe(200);
  });

  it("says the port is in use, and that the playground is not built, in one line each", async () => {
    const port = Number(new URL(server.url).port);
    await expect(startPlaygroundServer({ root: join(dir, "site"), port, host: "127.0.0.1" })).rejects.toThrow(
      `port ${port} on 127.0.0.1 is in use: choose another with --port (0 picks a free one)`,
    );
    await expect(startPlaygroundServer({ root: dir, port: 0, host: "127.0.0.1" })).rejects.toThrow(
      /^the playground is not built \(no `.*index\.html`\): run `npm run build`$/,
    );
  });
});

describe("writ playground", () => {
  it("serves dist/playground of the compiler package, from its sources as from its build", () => {
    expect(playgroundRoot()).toBe(join(repo, "compiler", "dist", "playground"));
    expect(playgroundRoot(join(repo, "compiler", "dist", "cli.js"))).toBe(join(repo, "compiler", "dist", "playground"));
  });

  it("--help prints its options", async () => {
    const r = await run("playground", "--help");
    expect(r.code).toBe(0);
    expect(r.out.split("\n")[0]).toMatch(/^usage: writ playground +serve the playground/);
    for (const option of ["--port N", "--host H", "--open"]) expect(r.out).toContain(option);
  });

  it.each([
    [["--port", "http"], "writ: playground: --port must be a port number from 0 to 65535, given `http`"],
    [["--port", "70000"], "writ: playground: --port must be a port number from 0 to 65535, given `70000`"],
    [["policies"], "writ: playground takes no paths, given `policies`"],
    [["--pot", "1"], "writ: playground: unknown option `--pot` (see `writ help`)"],
  ])("refuses %j with exit 2", async (argv, message) => {
    expect(await run("playground", ...argv)).toEqual({ code: 2, out: "", err: message });
  });
});
