/**
 * HTTP load generation for the sidecar benchmark, over autocannon (in this process; it shares the machine with
 * the server under test, alike for every contender).
 *
 * Every request carries its own body: `makeBody(i)` is called with a counter that never repeats within a call of
 * `runLoad` (warm-up included), so ids built from it are unique, as durable replay requires of execution ids.
 * Some counter values are drawn for requests that are never sent (autocannon builds a request per connection
 * ahead of time), so the ids are unique but not consecutive.
 *
 * Latency percentiles come from autocannon's own per-response timings (hrtime from write to parsed response),
 * read from its `response` event, not from its result histogram: that histogram records whole milliseconds, so
 * a loopback request of a few hundred microseconds counts as 0 ms or 1 ms and p50s could not be told apart.
 */
import { readFileSync } from "node:fs";
import autocannon from "autocannon";

type Length =
  /** Run for this long. */
  | { readonly durationSeconds: number; readonly amount?: never }
  /** Stop after this many responses. */
  | { readonly amount: number; readonly durationSeconds?: never };

export type LoadOptions = Length & {
  /**
   * Full URL, path included. Several URLs (the sidecars of a fleet): the connections are split evenly between them, at
   * least one each, and the figures are over all of their responses together.
   */
  readonly url: string | readonly string[];
  readonly connections: number;
  readonly method?: "POST" | "PUT";
  readonly headers?: Readonly<Record<string, string>>;
  /** The body of the i-th request. */
  readonly makeBody: (i: number) => string;
  /** Every response must have this status, or `runLoad` throws (figures over failing requests mean nothing). */
  readonly expectStatus?: number;
  /**
   * The CPU seconds the server under test has used so far (`processCpuSeconds` of its pid): read at the start and the
   * end of the measured run, so the result carries the server's CPU per response, which load elsewhere on a shared
   * machine changes far less than it changes req/s.
   */
  readonly serverCpuSeconds?: () => number;
  /** An unmeasured run first, on the same connections count, so both sides are past start-up (JIT, caches, pools). */
  readonly warmupSeconds?: number;
};

export interface LoadResult {
  /** Responses per second over the measured run. */
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Responses in the measured run. */
  readonly total: number;
  readonly durationSeconds: number;
  /** The server's CPU time per response in the measured run, in microseconds; null without `serverCpuSeconds`. */
  readonly cpuMicrosPerResponse: number | null;
}

/** Growable list of latencies; a benchmark of a few seconds collects some hundred thousand. */
class Samples {
  private values = new Float64Array(1 << 16);
  private n = 0;

  add(v: number): void {
    if (this.n === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.n++] = v;
  }

  get count(): number {
    return this.n;
  }

  /** Nearest-rank percentiles, `ps` in 0..100. */
  percentiles(ps: readonly number[]): number[] {
    const sorted = this.values.slice(0, this.n).sort();
    return ps.map((p) => sorted[Math.max(0, Math.ceil((p / 100) * this.n) - 1)]!);
  }
}

/** One autocannon run; `onResponse` sees every response's status and latency in (fractional) milliseconds. */
function fire(options: autocannon.Options, onResponse: (status: number, ms: number) => void): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (err: unknown, result) =>
      err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(result),
    );
    instance.on("response", (_client, status, _bytes, ms) => onResponse(status, ms));
  });
}

/** One autocannon run per URL at once, the connections split between them; resolves when all are done. */
async function fireAll(
  urls: readonly string[],
  connections: number,
  options: Omit<autocannon.Options, "url" | "connections">,
  onResponse: (status: number, ms: number) => void,
): Promise<{ readonly errors: number }> {
  const results = await Promise.all(
    urls.map((url, i) =>
      fire(
        { ...options, url, connections: Math.max(1, Math.floor(connections / urls.length) + (i < connections % urls.length ? 1 : 0)) },
        onResponse,
      ),
    ),
  );
  return { errors: results.reduce((sum, r) => sum + r.errors, 0) };
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const expectStatus = options.expectStatus ?? 200;
  const urls = typeof options.url === "string" ? [options.url] : options.url;
  let next = 0;
  const base: Omit<autocannon.Options, "url" | "connections"> = {
    method: options.method ?? "POST",
    headers: { ...options.headers },
    requests: [{ setupRequest: (request) => ({ ...request, body: options.makeBody(next++) }) }],
  };
  const unexpected = new Map<number, number>();
  const checkStatus = (status: number): void => {
    if (status !== expectStatus) unexpected.set(status, (unexpected.get(status) ?? 0) + 1);
  };
  const failIfUnclean = (what: string, result: { readonly errors: number }, responses: number): void => {
    const statuses = [...unexpected].map(([s, n]) => `${n} × HTTP ${s}`).join(", ");
    if (statuses || result.errors > 0) {
      throw new Error(
        `${what} against ${urls.join(", ")} (${options.connections} connections) was not clean: ` +
          `${statuses || "no unexpected status"} (expected HTTP ${expectStatus}), ${result.errors} connection errors or timeouts, ${responses} responses`,
      );
    }
  };

  if (options.warmupSeconds) {
    let responses = 0;
    const warm = await fireAll(urls, options.connections, { ...base, duration: options.warmupSeconds }, (status) => {
      responses++;
      checkStatus(status);
    });
    failIfUnclean("warm-up", warm, responses);
  }

  // Timed here rather than by autocannon's `duration`, which ends at its next one-second tick after the last
  // response: an `amount` run of 0.3 s would count as 1 s.
  const latencies = new Samples();
  const length = options.amount !== undefined ? { amount: options.amount } : { duration: options.durationSeconds };
  const cpuBefore = options.serverCpuSeconds?.() ?? null;
  const start = performance.now();
  let end = start;
  const result = await fireAll(urls, options.connections, { ...base, ...length }, (status, ms) => {
    end = performance.now();
    latencies.add(ms);
    checkStatus(status);
  });
  failIfUnclean("load", result, latencies.count);
  if (latencies.count === 0) throw new Error(`load against ${urls.join(", ")} got no response`);
  const durationSeconds = (end - start) / 1000;
  const [p50Ms, p99Ms] = latencies.percentiles([50, 99]) as [number, number];
  const cpuMicrosPerResponse = cpuBefore === null ? null : ((options.serverCpuSeconds!() - cpuBefore) * 1e6) / latencies.count;
  return {
    requestsPerSecond: latencies.count / durationSeconds,
    p50Ms,
    p99Ms,
    total: latencies.count,
    durationSeconds,
    cpuMicrosPerResponse,
  };
}

/** User and system CPU seconds that process `pid` has used (Linux `/proc/<pid>/stat`). */
export function processCpuSeconds(pid: number): number {
  return cpuSecondsOf(`/proc/${pid}/stat`);
}

/** Clock ticks a second, in which `stat` files count CPU time (Linux's USER_HZ, 100 on every platform it runs on). */
const TICKS = 100;

/**
 * The fields of a Linux `stat` file (`/proc/<pid>/stat`, or a thread's under `task/`), by their number in proc(5):
 * 4 the parent's pid, 12 the major page faults, 14 and 15 the user and system CPU time in ticks.
 */
export function statFields(file: string): (n: number) => number {
  const stat = readFileSync(file, "utf8");
  // The command name (field 2) may hold spaces: the fields after it start after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (n) => Number(fields[n - 3]);
}

/** Process `pid`'s CPU seconds split: its main thread's (node's event loop) and all its other threads' together. */
export function threadCpuSeconds(pid: number): { readonly main: number; readonly others: number } {
  const main = cpuSecondsOf(`/proc/${pid}/task/${pid}/stat`);
  return { main, others: processCpuSeconds(pid) - main };
}

/**
 * Seconds the main thread of `pid` (node's event loop) has run and has waited, ready, for a core (the kernel's
 * run-queue wait): over a run, its share of the wall time busy, and waiting behind other threads.
 */
export function loopSchedule(pid: number): { readonly ran: number; readonly waited: number } {
  const [ran, waited] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ").map(Number);
  return { ran: ran! / 1e9, waited: waited! / 1e9 };
}

/** The user and system CPU seconds in a `stat` file's fields (`statFields`). */
export const cpuSecondsIn = (field: (n: number) => number): number => (field(14) + field(15)) / TICKS;

function cpuSecondsOf(statFile: string): number {
  return cpuSecondsIn(statFields(statFile));
}

/** The medians of several runs of one server: what the benchmarks report. */
export interface Summary {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Median server CPU per response, µs; null when not measured. */
  readonly cpu: number | null;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

export function summarize(runs: readonly LoadResult[]): Summary {
  const cpu = runs.every((r) => r.cpuMicrosPerResponse !== null) ? median(runs.map((r) => r.cpuMicrosPerResponse!)) : null;
  return {
    rps: median(runs.map((r) => r.requestsPerSecond)),
    p50: median(runs.map((r) => r.p50Ms)),
    p99: median(runs.map((r) => r.p99Ms)),
    cpu,
  };
}

/** The rounds and timings of a benchmark run, from BENCH_ROUNDS (3), BENCH_DURATION (5 s) and BENCH_WARMUP (1 s). */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): {
  readonly rounds: number;
  readonly duration: number;
  readonly warmup: number;
} {
  const rounds = Number(env["BENCH_ROUNDS"] ?? 3);
  const duration = Number(env["BENCH_DURATION"] ?? 5);
  const warmup = Number(env["BENCH_WARMUP"] ?? 1);
  for (const [name, value] of [
    ["BENCH_ROUNDS", rounds],
    ["BENCH_DURATION", duration],
    ["BENCH_WARMUP", warmup],
  ] as const) {
    if (!(value >= (name === "BENCH_WARMUP" ? 0 : 1))) throw new Error(`${name} must be a positive number, not ${env[name]}`);
  }
  return { rounds, duration, warmup };
}
