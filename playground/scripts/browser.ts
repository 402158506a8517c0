/**
 * Headless Chromium for the playground's browser test and its screenshots: Debian's `chromium` package
 * (`apt-get install chromium`; .ci/run installs it), driven by playwright-core, and the playground served by the real
 * `writ playground` command of the built compiler on a free port.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium, type BrowserContext } from "playwright-core";

export const CHROMIUM_PATH = process.env["WRIT_CHROMIUM"] ?? "/usr/bin/chromium";
const CLI = new URL("../../compiler/dist/cli.js", import.meta.url).pathname;

/**
 * Why the browser cannot run here, or null when it can.
 * @throws Error instead with CI=true in `env`: CI must never pass by skipping.
 */
export function chromiumUnavailable(env: NodeJS.ProcessEnv = process.env): string | null {
  if (existsSync(CHROMIUM_PATH)) return null;
  const why = `no Chromium at ${CHROMIUM_PATH}`;
  if (env["CI"] === "true")
    throw new Error(`${why}: CI runs the playground's tests in a real browser (.ci/run installs Debian's chromium)`);
  return `${why}: \`apt-get install chromium\` (or set WRIT_CHROMIUM) to run the playground's browser tests`;
}

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile, removed on close. */
export async function launchChromium(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "writ-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1440, height: 1000 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface ServedPlayground {
  readonly url: string;
  /** Sends SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** `writ playground --port 0 [args]`, run from the built compiler; resolves with the URL it prints. */
export async function servePlayground(args: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<ServedPlayground> {
  if (!existsSync(CLI)) throw new Error(`${CLI} missing: run \`npm run build\` first (npm test does)`);
  const child = spawn(process.execPath, [CLI, "playground", "--port", "0", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      const m = /^writ playground: (http:\/\/\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error(`writ playground exited before serving: ${stderr.trim()}`)));
  });
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}
