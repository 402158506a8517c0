/**
 * What runs beside the load, each in a loop of its own on a keep-alive connection of its own, until stopped:
 * - `/health` every BENCH_SOAK_HEALTH_MS (the next poll starts when the last one answered, at the earliest that long
 *   after it started): every answer's latency, and when the slowest came; polled from a process of its own
 *   (health-poller.ts), whose event loop does nothing else;
 * - `/metrics` every second: the largest event-loop delay since the previous scrape, from
 *   `writ_event_loop_delay_max_seconds` where the sidecar has it, else prom-client's `writ_nodejs_eventloop_lag_max_seconds`
 *   (its monitor is reset at each scrape too); the histogram `writ_event_loop_delay_seconds` where it exists; and the
 *   sidecar's own timing of `POST /evaluate` (`writ_http_request_duration_seconds`, from the request read to the answer
 *   sent), so a latency the load generator saw can be told from one the sidecar had;
 * - the whole log's export (`GET /audit/export`), read to the end and dropped, again and again: each one's duration and
 *   bytes, the one cut short when the load ends included. Read by curl (a process of its own, in C), so that the
 *   megabytes a second it reads do not load this process, whose own latencies are the probes';
 * - a tail export every second: `from=` the latest checkpoint's size (`GET /audit/log`), a couple of KB;
 * - audit queries in a loop: the decisions list with and without filters, one decision, the stats, the log's state and
 *   an inclusion proof.
 * The other latencies are measured in this process: its own event-loop delay is recorded too, as the bound of their error.
 */
import { execFile, fork } from "node:child_process";
import { request, Agent } from "node:http";
import { open, rm } from "node:fs/promises";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

export interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly bytes: number;
  /** When it was asked (performance.now()). */
  readonly at: number;
  readonly body: string | null;
  /** The server ended the answer before its end (a stream that failed midway): a failure, whatever the status. */
  readonly cut: boolean;
}

/** An answer that never came: the connection was refused or reset before a status. */
const NO_ANSWER = { status: 0, bytes: 0, body: null, cut: true } as const;

/** One GET on `agent`; the body is kept up to `keep` bytes (0: only counted). */
export function get(agent: Agent, url: URL, headers: Record<string, string>, keep: number): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { agent, headers }, (res) => {
      let bytes = 0;
      const kept: Buffer[] = [];
      res.on("data", (chunk: Buffer) => {
        if (bytes < keep) kept.push(chunk);
        bytes += chunk.length;
      });
      const finish = (cut: boolean) =>
        resolve({
          status: res.statusCode ?? 0,
          ms: performance.now() - started,
          bytes,
          at: started,
          body: keep > 0 ? Buffer.concat(kept).toString("utf8") : null,
          cut,
        });
      res.once("end", () => finish(false));
      res.once("error", () => finish(true));
    });
    req.once("error", () => resolve({ ...NO_ANSWER, ms: performance.now() - started, at: started }));
    req.end();
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One export read by curl to /dev/null, cut after `seconds`: its status, bytes and duration as curl reports them. */
function curlExport(url: URL, apiKey: string, seconds: number): Promise<ExportRun> {
  return new Promise((resolve, reject) => {
    const args = [
      "-sS",
      "-o",
      "/dev/null",
      "--max-time",
      seconds.toFixed(2),
      "-w",
      "%{http_code} %{size_download} %{time_total}",
      "-H",
      `authorization: Bearer ${apiKey}`,
      url.href,
    ];
    execFile("curl", args, (error, stdout) => {
      const match = /^(\d+) (\d+) ([0-9.]+)$/.exec(stdout.trim());
      if (match === null) return reject(new Error(`curl printed \`${stdout}\`${error === null ? "" : ` (${error.message})`}`));
      // Exit code 28: cut at --max-time, the load's end; any other, the server cut it (or never answered).
      const end = error === null ? "complete" : error.code === 28 ? "load end" : "failed";
      resolve({ status: Number(match[1]), bytes: Number(match[2]), ms: Number(match[3]) * 1000, end });
    });
  });
}

export interface ExportRun {
  readonly ms: number;
  readonly bytes: number;
  /** Read to its end; cut by this benchmark when the load ended; or ended by the server (or the connection) midway. */
  readonly end: "complete" | "load end" | "failed";
  readonly status: number;
}

export interface ProbeResults {
  readonly health: readonly Answer[];
  /** Largest event-loop delay per scrape, seconds, with the metric it came from. */
  readonly loopDelay: {
    readonly metric: string | null;
    readonly maxSeconds: number;
    readonly scrapes: number;
    readonly histogram: Histogram | null;
  };
  /** `POST /evaluate` as the sidecar timed it while probing (`writ_http_request_duration_seconds`, any status). */
  readonly evaluateInSidecar: Histogram | null;
  /** `GET /health` as the sidecar timed it while probing. */
  readonly healthInSidecar: Histogram | null;
  readonly exports: readonly ExportRun[];
  readonly tails: readonly Answer[];
  readonly queries: ReadonlyMap<string, readonly Answer[]>;
  /** This process's own largest event-loop delay while probing, ms. */
  readonly ownDelayMaxMs: number;
  /** Probe requests that got no answer at all (refused, reset), each with its probe's name. */
  readonly errors: readonly string[];
  /** Durable 4 KB writes (write + fdatasync) to a file beside the stores, ms each: the disk's own floor under the same load. */
  readonly diskWrites: readonly number[];
}

/** Cumulative bucket counts by upper bound (seconds), as Prometheus exposes a histogram. */
export type Histogram = ReadonlyMap<number, number>;

const DELAY_MAX = ["writ_event_loop_delay_max_seconds", "writ_nodejs_eventloop_lag_max_seconds"] as const;

function gauge(text: string, name: string): number | null {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([-+0-9.eE]+|NaN)$`, "m").exec(text);
  return match === null ? null : Number(match[1]);
}

/** The histogram `name`, its series with every one of `labels` (`key="value"`) summed. */
function histogram(text: string, name: string, labels: readonly string[] = []): Histogram | null {
  const buckets = new Map<number, number>();
  for (const match of text.matchAll(new RegExp(`^${name}_bucket\\{([^}]*)\\} ([0-9.eE+]+)$`, "gm"))) {
    const series = match[1]!;
    const le = /(?:^|,)le="([^"]+)"/.exec(series)?.[1];
    if (le === undefined || !labels.every((label) => series.includes(label))) continue;
    const bound = le === "+Inf" ? Infinity : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(match[2]));
  }
  return buckets.size === 0 ? null : buckets;
}

const EVALUATE_SERIES = ['method="POST"', 'route="/evaluate"'] as const;
const HEALTH_SERIES = ['method="GET"', 'route="/health"'] as const;

/** `later - earlier`, bucket by bucket: what the histogram counted in between. */
export function histogramDelta(earlier: Histogram | null, later: Histogram | null): Histogram | null {
  if (later === null) return null;
  return new Map([...later].map(([le, n]) => [le, n - (earlier?.get(le) ?? 0)]));
}

export interface ProbeTargets {
  readonly url: string;
  readonly apiKey: string;
  /** A decision the store holds (a seeded one), for the single-decision query and the inclusion proof. */
  readonly knownExecutionId: string;
  readonly healthEveryMs: number;
  readonly exports: "loop" | "once" | "off";
  /** A scratch file on the stores' filesystem for the disk probe. */
  readonly diskProbeFile: string;
}

/** How often the disk probe writes: often enough to see a stall of the disk, rarely enough to be no load on it. */
const DISK_PROBE_EVERY_MS = 20;

export class Probes {
  readonly #stop = new AbortController();
  readonly #runs: Promise<unknown>[] = [];
  readonly #health: Answer[] = [];
  readonly #tails: Answer[] = [];
  readonly #exports: ExportRun[] = [];
  readonly #queries = new Map<string, Answer[]>();
  readonly #agents: Agent[] = [];
  readonly #errors: string[] = [];
  readonly #diskWrites: number[] = [];
  readonly #own = monitorEventLoopDelay({ resolution: 10 });
  #delay = { metric: null as string | null, maxSeconds: 0, scrapes: 0 };
  #firstHistogram: Histogram | null = null;
  #lastHistogram: Histogram | null = null;
  #firstEvaluate: Histogram | null = null;
  #lastEvaluate: Histogram | null = null;
  #firstHealth: Histogram | null = null;
  #lastHealth: Histogram | null = null;
  readonly #t: ProbeTargets;
  readonly #auth: Record<string, string>;

  constructor(targets: ProbeTargets) {
    this.#t = targets;
    this.#auth = { authorization: `Bearer ${targets.apiKey}` };
  }

  /** Starts every loop; a whole-log export under way is cut at `until` (performance.now()). */
  start(until: number): void {
    this.#own.enable();
    this.#runs.push(this.#pollHealth());
    this.#runs.push(this.#diskProbe());
    this.#loop("metrics", async (agent) => {
      await this.scrape(agent);
      await sleep(1_000);
    });
    this.#loop("export", async () => {
      const seconds = (until - performance.now()) / 1000;
      if (seconds < 0.5 || this.#t.exports === "off" || (this.#t.exports === "once" && this.#exports.length > 0)) return sleep(100);
      this.#exports.push(await curlExport(new URL("/audit/export", this.#t.url), this.#t.apiKey, seconds));
    });
    this.#loop("tail", async (agent) => {
      const tail = await this.tailExport(agent);
      if (tail !== null) this.#tails.push(tail);
      await sleep(1_000);
    });
    const id = encodeURIComponent(this.#t.knownExecutionId);
    const queries: readonly [string, string][] = [
      ["decisions", "/audit/decisions?limit=50"],
      ["decisions?policyId", "/audit/decisions?limit=50&policyId=payments.transfer"],
      ["decisions?decision", "/audit/decisions?limit=50&decision=rejected"],
      ["decisions/:executionId", `/audit/decisions/${id}`],
      ["stats", "/audit/stats"],
      ["log", "/audit/log"],
      ["proofs/inclusion", `/audit/proofs/inclusion?executionId=${id}`],
    ];
    this.#loop("queries", async (agent) => {
      for (const [name, path] of queries) {
        if (this.#stop.signal.aborted) return;
        const answer = await get(agent, new URL(path, this.#t.url), this.#auth, 0);
        this.#queries.set(name, [...(this.#queries.get(name) ?? []), answer]);
      }
      await sleep(250);
    });
  }

  /** The latest checkpoint's size, then the export from it (or the failed answer of the first); null when the log has no checkpoint yet. */
  async tailExport(agent: Agent): Promise<Answer | null> {
    const log = await get(agent, new URL("/audit/log", this.#t.url), this.#auth, 1 << 20);
    if (log.status !== 200 || log.cut) return log;
    const size = (JSON.parse(log.body ?? "{}") as { latest?: { size?: number } | null }).latest?.size;
    if (size === undefined) return null;
    return get(agent, new URL(`/audit/export?from=${size}`, this.#t.url), this.#auth, 0);
  }

  /** One scrape of `/metrics`: the delay since the previous one, and the histogram. */
  async scrape(agent: Agent): Promise<void> {
    const answer = await get(agent, new URL("/metrics", this.#t.url), this.#auth, 16 << 20);
    const text = answer.body ?? "";
    for (const name of DELAY_MAX) {
      const value = gauge(text, name);
      if (value === null || Number.isNaN(value)) continue;
      this.#delay = { metric: name, maxSeconds: Math.max(this.#delay.maxSeconds, value), scrapes: this.#delay.scrapes + 1 };
      break;
    }
    const h = histogram(text, "writ_event_loop_delay_seconds");
    this.#firstHistogram ??= h;
    this.#lastHistogram = h;
    const evaluate = histogram(text, "writ_http_request_duration_seconds", EVALUATE_SERIES);
    this.#firstEvaluate ??= evaluate;
    this.#lastEvaluate = evaluate;
    const health = histogram(text, "writ_http_request_duration_seconds", HEALTH_SERIES);
    this.#firstHealth ??= health;
    this.#lastHealth = health;
  }

  /** Stops every loop (an export under way is cut), one last scrape, and the results. */
  async stop(): Promise<ProbeResults> {
    this.#stop.abort();
    await Promise.all(this.#runs);
    const agent = new Agent({ keepAlive: false });
    await this.scrape(agent);
    this.#own.disable();
    for (const a of this.#agents) a.destroy();
    return {
      health: this.#health,
      loopDelay: { ...this.#delay, histogram: histogramDelta(this.#firstHistogram, this.#lastHistogram) },
      evaluateInSidecar: histogramDelta(this.#firstEvaluate, this.#lastEvaluate),
      healthInSidecar: histogramDelta(this.#firstHealth, this.#lastHealth),
      exports: this.#exports,
      tails: this.#tails,
      queries: this.#queries,
      ownDelayMaxMs: this.#own.max / 1e6,
      errors: this.#errors,
      diskWrites: this.#diskWrites,
    };
  }

  /**
   * The physical floor beside the sidecar: a 4 KB write and fdatasync to a file on the stores' filesystem every
   * DISK_PROBE_EVERY_MS, timed. A sidecar answers after its write is durable, so no answer can be quicker than the disk
   * is at that moment: a stall of the disk here is one every durable service on this disk would see too.
   */
  async #diskProbe(): Promise<void> {
    const file = await open(this.#t.diskProbeFile, "w");
    const block = Buffer.alloc(4096, 1);
    try {
      for (let i = 0; !this.#stop.signal.aborted; i++) {
        const started = performance.now();
        await file.write(block, 0, block.length, (i % 256) * block.length);
        await file.datasync();
        this.#diskWrites.push(performance.now() - started);
        await sleep(DISK_PROBE_EVERY_MS);
      }
    } finally {
      await file.close();
      await rm(this.#t.diskProbeFile, { force: true });
    }
  }

  /** `/health` polled by a child process (health-poller.ts) until stopped; its answers timed on this process's clock. */
  async #pollHealth(): Promise<void> {
    const child = fork(fileURLToPath(new URL("./health-poller.ts", import.meta.url)), { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const answers = new Promise<Answer[]>((resolve, reject) => {
      child.once("message", (message) => resolve(message as Answer[]));
      child.once("exit", (code) => reject(new Error(`the /health poller exited (${code}) without its answers`)));
    });
    child.send({ url: this.#t.url, everyMs: this.#t.healthEveryMs });
    const stopped = new Promise<void>((resolve) => this.#stop.signal.addEventListener("abort", () => resolve(), { once: true }));
    await stopped;
    child.send("stop");
    try {
      for (const answer of await answers) this.#health.push({ ...answer, at: answer.at - performance.timeOrigin });
    } catch (error) {
      this.#errors.push(`health: ${(error as Error).message}`);
    }
  }

  #loop(name: string, body: (agent: Agent) => Promise<void>): void {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    this.#agents.push(agent);
    this.#runs.push(
      (async () => {
        while (!this.#stop.signal.aborted) {
          try {
            await body(agent);
          } catch (error) {
            // A refused or reset connection is part of what is measured: counted, and the loop goes on.
            if (!this.#stop.signal.aborted) this.#errors.push(`${name}: ${(error as Error).message}`);
            await sleep(100);
          }
        }
      })(),
    );
  }
}
