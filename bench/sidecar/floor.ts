/**
 * The durability floor of the sidecar benchmark: a bare node HTTP server, in its own process, that answers each
 * request after one LMDB write flushed to disk (what writ must do at least once per signed decision: "acknowledged
 * means durable"), with no parsing, signing, evaluation or audit. writ's latency over this floor is what writ itself
 * adds; the floor's over Cerbos is what durability costs on this machine's disk.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pinned } from "./pinning.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** The server's program: plain ESM, so it runs with node alone (lmdb resolved from the repository). */
const PROGRAM = `
import { createServer } from "node:http";
import { open } from "lmdb";
const root = open({ path: process.argv[1], noSubdir: false });
const db = root.openDB({ name: "floor", encoding: "json" });
let n = 0;
const server = createServer((request, response) => {
  request.resume();
  request.on("end", async () => {
    await db.put(String(n++), { state: "consumed", at: Date.now() });
    await root.flushed;
    response.writeHead(200, { "content-type": "application/json" });
    response.end("{}");
  });
});
server.listen(0, "127.0.0.1", () => console.log("listening " + server.address().port));
`;

export interface Floor {
  readonly url: string;
  stop(): Promise<void>;
}

export async function startFloor(): Promise<Floor> {
  const dir = await mkdtemp(join(tmpdir(), "writ-bench-floor-"));
  return startFloorServer(PROGRAM, [dir], () => rm(dir, { recursive: true, force: true }));
}

/**
 * Runs `program` (plain ESM, packages resolved from the repository, printing `listening <port>` once it listens) in its
 * own process with `args`; `cleanUp` runs after it stopped.
 */
export async function startFloorServer(
  program: string,
  args: readonly string[],
  cleanUp: () => Promise<void> = async () => undefined,
): Promise<Floor> {
  const [command, commandArgs] = pinned(process.execPath, ["--input-type=module", "-e", program, ...args]);
  const child = spawn(command, commandArgs, {
    cwd: REPO,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await cleanUp();
  };
  try {
    const port = await new Promise<string>((resolve, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        const match = /listening (\d+)/.exec(chunk.toString());
        if (match) resolve(match[1]!);
      });
      child.once("exit", (code) => reject(new Error(`the floor server exited with ${code} before listening`)));
    });
    return { url: `http://127.0.0.1:${port}/`, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
