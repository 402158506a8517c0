/**
 * The first process of a sidecar of several (docs/sidecar.md, "Several processes"): it opens no store and serves no
 * request. It starts the processes (node:cluster, each accepting from the shared sockets itself), starts another in
 * place of one that dies once it served (after a growing wait if it died soon after), and ends the sidecar when one
 * cannot start. It passes SIGTERM, SIGINT and SIGHUP to every process, and answers their requests for what all of
 * them share (protocol.ts).
 */
import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import type { Logger } from "../observability/logger.js";
import { isProcessMessage, type ProcessMessage } from "./protocol.js";
import { PROCESS_INDEX_VARIABLE } from "./settings.js";

/** A process that ends within this long of serving is replaced after a wait, doubled each time up to the last. */
const QUICK_END_MS = 10_000;
const REPLACE_WAITS_MS = [1_000, 2_000, 4_000, 8_000, 16_000, 30_000];

export interface SupervisorOptions {
  readonly count: number;
  /** The lifecycle log: the processes' starts, ends and replacements. */
  readonly log: Logger;
  /** How long a process may take to stop after SIGTERM before it is killed. */
  readonly stopTimeoutMs: number;
}

/** Runs the sidecar's processes until a signal stops them or one cannot start; resolves with the exit code. */
export function superviseProcesses({ count, log, stopTimeoutMs }: SupervisorOptions): Promise<number> {
  const aggregator = new AggregatorRegistry();
  /** When each process began serving, and how many of its index's processes in a row ended soon after. */
  const serving = new Map<Worker, number>();
  const quickEnds = new Map<number, number>();
  const replacing = new Set<NodeJS.Timeout>();
  const indexes = new Map<Worker, number>();
  let stopping = false;
  let exitCode = 0;
  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (finish = resolve));

  const start = (index: number) => {
    const worker = cluster.fork({ [PROCESS_INDEX_VARIABLE]: String(index) });
    indexes.set(worker, index);
    worker.on("message", (message: unknown) => {
      if (isProcessMessage(message)) void answer(worker, message);
    });
  };
  /** Sends `signal` to every process running, but `except`. */
  const signalAll = (signal: NodeJS.Signals, except: Worker | null = null) => {
    for (const worker of indexes.keys()) if (worker !== except) worker.process.kill(signal);
  };
  const ended = () => {
    log.info("stopped");
    finish(exitCode);
  };
  /** Passes `signal` to every process; the sidecar exits with `code` (or 1, if one of them ends in failure). */
  const stop = (signal: NodeJS.Signals, code: number) => {
    if (!stopping) {
      stopping = true;
      exitCode = code;
      for (const timer of replacing) clearTimeout(timer);
      log.info(`${signal}: stopping the sidecar's ${indexes.size} running processes`);
      if (indexes.size === 0) return ended();
      setTimeout(() => signalAll("SIGKILL"), stopTimeoutMs).unref();
    }
    signalAll(signal);
  };
  const answer = async (from: Worker, message: ProcessMessage) => {
    if (message.type === "serving") {
      serving.set(from, Date.now());
      // The first process starts alone (it applies the store's migrations, if any); the others once it serves.
      if (indexes.get(from) === 0 && indexes.size === 1 && !stopping) for (let index = 1; index < count; index++) start(index);
      if (serving.size === count && !stopping) log.info(`${count} processes serving`);
    } else if (message.type === "reload") {
      signalAll("SIGHUP", from);
    } else if (message.type === "metrics") {
      const reply = await aggregator.clusterMetrics().then(
        (text): ProcessMessage => ({ type: "metrics-text", id: message.id, text }),
        (e: unknown): ProcessMessage => ({ type: "metrics-text", id: message.id, error: e instanceof Error ? e.message : String(e) }),
      );
      if (from.isConnected()) from.send(reply);
    }
  };

  cluster.on("exit", (worker, code, signal) => {
    const index = indexes.get(worker)!;
    const served = serving.get(worker);
    serving.delete(worker);
    indexes.delete(worker);
    const how = signal === null ? `exit code ${code}` : signal;
    if (stopping) {
      if (code !== 0) exitCode = 1;
      if (indexes.size === 0) ended();
    } else if (served !== undefined) {
      const quick = Date.now() - served < QUICK_END_MS ? (quickEnds.get(index) ?? 0) + 1 : 0;
      quickEnds.set(index, quick);
      const wait = quick === 0 ? 0 : REPLACE_WAITS_MS[Math.min(quick, REPLACE_WAITS_MS.length) - 1]!;
      log.error(`process ${index} ended (${how}): starting another in its place${wait === 0 ? "" : ` in ${wait / 1000} s`}`);
      const timer = setTimeout(() => {
        replacing.delete(timer);
        start(index);
      }, wait);
      replacing.add(timer);
    } else {
      log.fatal(`process ${index} ended (${how}) before it served: stopping the sidecar`);
      stop("SIGTERM", code === 0 || code === null ? 1 : code);
    }
  });
  process.on("SIGTERM", () => stop("SIGTERM", 0));
  process.on("SIGINT", () => stop("SIGINT", 0));
  process.on("SIGHUP", () => signalAll("SIGHUP"));
  // Each process accepts from the shared socket itself: a connection the supervisor handed to a process that died
  // before taking it would stay open, unanswered, until the client gave up.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  cluster.setupPrimary({ args: process.argv.slice(2) });
  start(0);
  return finished;
}
