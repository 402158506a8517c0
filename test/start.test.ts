/**
 * `npm start` (scripts/start.ts) as a new user meets it: it builds what is stale, compiles policies/, starts the
 * sidecar in development mode and, once it is ready, prints the time each step took and a curl whose paste decides
 * examples/evaluate-request.json. SIGTERM stops the sidecar gracefully and exits 0.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "writ-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

it("reaches a ready sidecar, prints a curl that decides the example request, and stops on SIGTERM", async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, SERVICE_PORT: "0", SERVICE_B_PORT: "0", SERVICE_DATA_DIR: dataDir, INIT_CWD: root };
  for (const name of ["SERVICE_API_KEY", "SERVICE_API_KEY_FILE", "SERVICE_DECIDE_KEY", "SERVICE_DECIDE_KEY_FILE"]) delete env[name];
  const start = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => start.on("close", (code) => resolve(code)));
  const log: string[] = [];
  createInterface({ input: start.stdout }).on("line", (line) => log.push(line));
  const stderr: string[] = [];
  const curl = await new Promise<string>((resolve, reject) => {
    createInterface({ input: start.stderr }).on("line", (line) => {
      stderr.push(line);
      if (line.startsWith("  curl ")) resolve(line.trim());
    });
    void exited.then((code) => reject(new Error(`npm start exited with ${code} before printing a curl:\n${stderr.join("\n")}`)));
  });

  expect(stderr).toContainEqual(
    expect.stringMatching(
      /^start: ready in \d+\.\d s \(build \d+\.\d s, compile policies \d+\.\d s, sidecar \d+\.\d s\)\. A first decision:$/,
    ),
  );
  expect(curl).toMatch(/^curl -s http:\/\/127\.0\.0\.1:\d+\/evaluate -H "authorization: Bearer \$\(cat [^)]*\/api-key\)" /);
  expect(curl).not.toContain(readFileSync(join(dataDir, "api-key"), "utf8").trim());
  // The line is pasted into a shell in the directory npm start was typed in.
  const pasted = spawnSync("bash", ["-c", curl], { cwd: root, encoding: "utf8", timeout: 30_000 });
  expect(pasted.status).toBe(0);
  const answer = JSON.parse(pasted.stdout) as { status: string; attestation: { executionId: string } };
  expect({ status: answer.status, executionId: answer.attestation.executionId }).toEqual({ status: "approved", executionId: "order-4711" });

  start.kill("SIGTERM");
  expect(await exited).toBe(0);
  expect(log.map((line) => (JSON.parse(line) as { msg: string }).msg)).toContain("stopped");
}, 120_000);
