/**
 * Load from `wrk` (Debian package `wrk`), not autocannon: at 50 connections it takes a fraction of the CPU autocannon
 * takes in node, which matters where the load generator shares the servers' cores, and it records every latency in
 * microseconds (HdrHistogram), which p99.9 and the maximum need. One thread, on the cores this process may use.
 *
 * Every request is a POST of one of `bodies` in turn, with a unique id (`<prefix><thread>-<n>`) wherever the body
 * holds ID_SLOT; a generated Lua script builds them and, when wrk is done, writes its summary as one JSON line.
 *
 * Paced (`rate`): each connection waits, before each request, a random time drawn from an exponential distribution
 * whose mean spreads the rate over the connections (`connections / rate` seconds), so arrivals are close to a Poisson
 * stream of that rate, as independent clients arrive: the server is not saturated, and a request's latency is its own
 * work plus any stall, not the queue of the others in front of it. The rate reached is a little lower than asked
 * (each wait starts after the answer), and is printed.
 */
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";

/** Where a body takes its request's unique id (an executionId, a Cerbos requestId). */
export const ID_SLOT = "@@wrk-request-id@@";

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

/** Lua long string: refused if the text holds its closing bracket. */
function luaString(text: string): string {
  if (text.includes("]==]")) throw new Error("a body holds `]==]`, which the Lua script cannot quote");
  return `[==[${text}]==]`;
}

function script(run: WrkRun): string {
  const pieces = run.bodies.map((body) => {
    const parts = body.split(ID_SLOT);
    if (parts.length < 2) throw new Error(`a body holds no ID_SLOT: ${body.slice(0, 200)}`);
    return `{ ${parts.map(luaString).join(", ")} }`;
  });
  const headers = Object.entries(run.headers).map(([name, value]) => `wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`);
  const meanWaitMs = run.rate === null ? null : (1000 * run.connections) / run.rate;
  return `
local bodies = { ${pieces.join(",\n  ")} }
local count = #bodies
local n = 0
local threads = 0
wrk.method = "POST"
${headers.join("\n")}

function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

function request()
  n = n + 1
  local id = ${luaString(run.prefix)} .. tid .. '-' .. n
  return wrk.format(nil, nil, nil, table.concat(bodies[(n % count) + 1], id))
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
  io.write(string.format('WRK-SUMMARY {"requests":%d,"us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d,"p999":%d,"max":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max))
end
`;
}

export interface WrkRun {
  /** The URL requests are POSTed to, path included. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Request bodies, used in turn, each holding ID_SLOT where the request's id goes. */
  readonly bodies: readonly string[];
  readonly connections: number;
  readonly seconds: number;
  /** Unique per run: ids are `<prefix><thread>-<n>`. */
  readonly prefix: string;
  readonly scriptFile: string;
  /** A taskset CPU list to run wrk on; null: the cores this process may use. */
  readonly cpus: string | null;
  /** Requests per second across all connections (paced, see the header); null: as fast as the server answers. */
  readonly rate: number | null;
}

export async function runWrk(run: WrkRun): Promise<WrkResult> {
  await writeFile(run.scriptFile, script(run));
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
  const line = /WRK-SUMMARY (\{.*\})/.exec(output);
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
