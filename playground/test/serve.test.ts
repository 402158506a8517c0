/**
 * `writ playground` as a person runs it, from the built compiler: it prints where it serves, `--open` hands that URL to
 * the default browser (on Linux through xdg-open, which runs `$BROWSER`; a script stands in for one here), and SIGTERM
 * stops it with exit 0.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { servePlayground } from "../scripts/browser.js";

it.runIf(process.platform === "linux")(
  "--open opens the printed URL in the default browser, and SIGTERM stops the server with exit 0",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "writ-open-"));
    try {
      const browser = join(dir, "browser.sh");
      const opened = join(dir, "opened");
      writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
      chmodSync(browser, 0o755);
      const env = { ...process.env, BROWSER: browser, DISPLAY: "", WAYLAND_DISPLAY: "", XDG_CURRENT_DESKTOP: "" };
      const served = await servePlayground(["--open"], env);
      const deadline = Date.now() + 10_000;
      while (!existsSync(opened) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const code = await served.stop();
      expect(existsSync(opened) ? readFileSync(opened, "utf8") : "(the browser was never started)").toBe(served.url);
      expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
