/**
 * The load: `wrk` (Debian package `wrk`: `apt-get install wrk`), not autocannon, because at 50 connections it takes a
 * fraction of the CPU autocannon does in node, and it records every response's latency in microseconds (HdrHistogram),
 * which p99.9 and the maximum need. One thread, pinned with the probes to the load cores.
 *
 * Every request is `POST /evaluate` of the shipped policy with a unique executionId (`<prefix><thread>-<n>`), cycling
 * through the valid signal sets of its test file; a generated Lua script builds them and, when wrk is done, writes its
 * summary as one JSON line.
 *
 * Paced (BENCH_SOAK_RATE): each connection waits, before each request, a random time drawn from an exponential
 * distribution whose mean spreads the rate over the connections (`connections / rate` seconds), so arrivals are close to
 * a Poisson stream of that rate, the way independent clients arrive: the sidecar is not saturated, and a request's
 * latency is its own work plus any stall, not the queue of 49 others in front of it. The rate reached is a little
 * lower than asked (each wait starts after the answer), and is printed.
 */
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { POLICY_ID, POLICY_VERSION } from "./decisions.js";
import type { Signals } from "../sidecar/policy-cases.js";

export interface WrkResult {
  readonly requests: number;
  readonly seconds: number;
  /** Responses with a status of 400 or above (wrk counts no other non-2xx apart). */
  readonly non2xx: number;
  readonly socketErrors: { readonly connect: number; readonly read: number; readonly write: number; readonly timeout: number };
  /** Milliseconds. */
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

/** Lua long string: no `]==]` can occur in the JSON of a signal set of the shipped policy. */
function luaString(text: string): string {
  if (text.includes("]==]")) throw new Error("a body holds `]==]`, which the Lua script cannot quote");
  return `[==[${text}]==]`;
}

function script(signalSets: readonly Signals[], apiKey: string, prefix: string, meanWaitMs: number | null): string {
  // Each body is the tail after the executionId: `","policyId":…,"verifiedSignals":{…}}`.
  const tails = signalSets.map((signals) =>
    JSON.stringify({ policyId: POLICY_ID, policyVersion: POLICY_VERSION, verifiedSignals: signals }).replace(/^\{/, '",'),
  );
  return `
local tails = { ${tails.map(luaString).join(",\n  ")} }
local count = #tails
local n = 0
local threads = 0
wrk.method = "POST"
wrk.path = "/evaluate"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer ${apiKey}"

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

function request()
  n = n + 1
  return wrk.format(nil, nil, nil, '{"executionId":"${prefix}' .. tid .. '-' .. n .. tails[(n % count) + 1])
end

${
  meanWaitMs === null
    ? ""
    : `
math.randomseed(os.time())
function delay()
  return math.floor(-math.log(1 - math.random()) * ${meanWaitMs})
end
`
}
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('SOAK-WRK {"requests":%d,"us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d,"p999":%d,"max":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max))
end
`;
}

export interface WrkRun {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  readonly signalSets: readonly Signals[];
  readonly apiKey: string;
  /** Unique per run: executionIds are `<prefix><thread>-<n>`. */
  readonly prefix: string;
  readonly scriptFile: string;
  /** A taskset CPU list to run wrk on; null: not pinned. */
  readonly cpus: string | null;
  /** Requests per second across all connections (paced, see the header); null: as fast as the sidecar answers. */
  readonly rate: number | null;
}

export async function runWrk(run: WrkRun): Promise<WrkResult> {
  await writeFile(
    run.scriptFile,
    script(run.signalSets, run.apiKey, run.prefix, run.rate === null ? null : (1000 * run.connections) / run.rate),
  );
  const args = ["-t1", `-c${run.connections}`, `-d${run.seconds}s`, "--timeout", "60s", "-s", run.scriptFile, run.url];
  const [command, argv] = run.cpus === null ? ["wrk", args] : ["taskset", ["-c", run.cpus, "wrk", ...args]];
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
    child.once("error", (error) => reject(new Error(`wrk did not start (${error.message}): install it with \`apt-get install wrk\``)));
    child.once("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}:\n${text}`))));
  });
  const line = /SOAK-WRK (\{.*\})/.exec(output);
  if (line === null) throw new Error(`wrk printed no summary:\n${output}`);
  const r = JSON.parse(line[1]!) as Record<string, number>;
  const ms = (us: number | undefined) => (us ?? 0) / 1000;
  return {
    requests: r["requests"]!,
    seconds: r["us"]! / 1e6,
    non2xx: r["status"]!,
    socketErrors: { connect: r["connect"]!, read: r["read"]!, write: r["write"]!, timeout: r["timeout"]! },
    p50: ms(r["p50"]),
    p99: ms(r["p99"]),
    p999: ms(r["p999"]),
    max: ms(r["max"]),
  };
}
