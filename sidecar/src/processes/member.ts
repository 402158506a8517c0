/**
 * One process of a sidecar of several, as it speaks to its supervisor (supervisor.ts); in a sidecar of one process
 * each of these does nothing, or answers for this process alone.
 */
import cluster from "node:cluster";
import { AggregatorRegistry, type Registry } from "prom-client";
import { isProcessMessage, type ProcessMessage } from "./protocol.js";

/** How long a scrape waits for the supervisor's answer before it fails (prom-client waits 5 s for each process). */
const METRICS_TIMEOUT_MS = 10_000;

export const isMember = (): boolean => cluster.isWorker;

function send(message: ProcessMessage): void {
  if (cluster.isWorker && process.connected) process.send!(message);
}

/** Tells the supervisor this process serves: from now on, a process that ends is started again. */
export function announceServing(): void {
  send({ type: "serving" });
}

/**
 * Lets go of the supervisor's channel, which would keep a stopped process alive: the process then ends as a sidecar
 * of one process does, with its exit code, once everything it opened is closed.
 */
export function leaveSupervisor(): void {
  if (cluster.isWorker && process.connected) cluster.worker!.disconnect();
}

/** Has every other process reload its bundle keys and bundles, as SIGHUP does. */
export function reloadOtherMembers(): void {
  send({ type: "reload" });
}

/** Answers the supervisor's requests for this process's series from `registry` (prom-client's cluster protocol). */
export function shareMetrics(registry: Registry): void {
  if (!cluster.isWorker) return;
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

let nextRequest = 0;

/** The series of every process of the sidecar, summed (a gauge as its declaration says), from the supervisor. */
export function membersMetrics(): Promise<string> {
  const id = nextRequest++;
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      if (!isProcessMessage(message) || message.type !== "metrics-text" || message.id !== id) return;
      clearTimeout(timer);
      process.off("message", onMessage);
      if ("error" in message) reject(new Error(`the sidecar's processes did not all answer: ${message.error}`));
      else resolve(message.text);
    };
    const timer = setTimeout(() => {
      process.off("message", onMessage);
      reject(new Error(`the sidecar's processes did not answer within ${METRICS_TIMEOUT_MS} ms`));
    }, METRICS_TIMEOUT_MS);
    process.on("message", onMessage);
    send({ type: "metrics", id });
  });
}
