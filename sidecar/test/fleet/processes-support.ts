/** Reading a built sidecar of several processes (SERVICE_PROCESSES) from outside: its answers, its log, its pids. */
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { expect } from "vitest";
import { logLines, type BuiltSidecar } from "../support/built-sidecar.js";
import { API_KEY } from "../durability/load.js";

/** One request on a connection of its own (no keep-alive), so that the supervisor hands each to the next process. */
export function fresh(url: string, method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${API_KEY}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const req = request(`${url}${path}`, { method, agent: false, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The supervisor's line once both processes of a sidecar of two serve (again, after a replacement). */
export const bothServing = (line: Record<string, unknown>): boolean => line["msg"] === "2 processes serving";

/** Polls `sidecar`'s log until a line passes `test`; the lines so far. */
export async function logged(sidecar: BuiltSidecar, test: (line: Record<string, unknown>) => boolean, what: string, after = 0) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const lines = logLines(sidecar.all().stdout).slice(after);
    if (lines.some(test)) return lines;
    if (Date.now() > deadline) throw new Error(`no log line ${what} within 20 s:\n${sidecar.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The instance ids the sidecar's `/health` answers with over `n` connections of their own. */
export async function instanceIds(url: string, n: number): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let i = 0; i < n; i++) {
    const { status, text } = await fresh(url, "GET", "/health");
    expect(status).toBe(200);
    ids.add(String((JSON.parse(text) as { instanceId: unknown }).instanceId));
  }
  return ids;
}

/** The pid of process `index`, from its latest log line. */
export const pidOf = (lines: Record<string, unknown>[], index: number): number =>
  lines.filter((l) => l["process"] === index && typeof l["pid"] === "number").at(-1)!["pid"] as number;

/** Whether `pid` runs (a zombie, ended but not yet reaped, does not). */
export function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}
