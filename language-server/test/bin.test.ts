/** `writ-language-server`, the committed binary, as an editor starts it: `--stdio`, after `npm run build`. */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { spawnedSession } from "./support/session.js";

const root = new URL("../", import.meta.url).pathname;
const bin = `${root}bin/writ-language-server.js`;
const built = existsSync(`${root}dist/cli.js`);

describe("writ-language-server", () => {
  it("is built (npm test builds before testing)", () => {
    expect(built, "run `npm run build` first").toBe(true);
  });

  it.runIf(built)("serves over stdio: diagnostics for an opened policy", async () => {
    const session = await spawnedSession(process.execPath, [bin, "--stdio"]);
    try {
      expect(session.initialized.serverInfo?.name).toBe("writ-language-server");
      const published = await session.open(
        "file:///p/policy.writ",
        'policy "p" version "1.0.0"\ngoverns "a"\nsignals { n: number }\nrule r when n > 1 reject "r"\notherwise "x"\n',
      );
      expect(published.diagnostics.map((d) => [d.code, d.message])).toEqual([
        ["E201", 'expected `approve`, `escalate` or `reject`, found `"x"`'],
      ]);
    } finally {
      await session.close();
    }
  });

  it.runIf(built)("names the transports and exits 2 when given none", () => {
    const r = spawnSync(process.execPath, [bin], { encoding: "utf8" });
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
      status: 2,
      stdout: "",
      stderr: "writ-language-server: no transport given\nusage: writ-language-server --stdio | --node-ipc | --socket=PORT | --pipe=NAME\n",
    });
  });
});
