/**
 * The `/health` poller of the soak (probes.ts), in a process of its own: forked by `Probes.start`, it polls until told
 * to stop, then sends every answer back and exits. Apart, its latencies are the sidecar's: the probes' process also
 * parses metrics, queries and proofs, and its own event loop stalled up to 100 ms under the load, which a poll it timed
 * counted as the sidecar's.
 *
 * Messages: in, `{ url, everyMs }` to start, `"stop"` to stop; out, the answers (`Answer[]`), each `at` in ms since the
 * epoch (the parent's performance clock is not this process's).
 */
import { Agent } from "node:http";
import { get, type Answer } from "./probes.js";

interface Start {
  readonly url: string;
  readonly everyMs: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let stopped = false;
const answers: Answer[] = [];

async function poll({ url, everyMs }: Start): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  while (!stopped) {
    const started = performance.now();
    const answer = await get(agent, new URL("/health", url), {}, 0);
    answers.push({ ...answer, at: performance.timeOrigin + answer.at });
    await sleep(Math.max(0, everyMs - (performance.now() - started)));
  }
  agent.destroy();
  process.send!(answers, () => process.exit(0));
}

process.on("message", (message: Start | "stop") => {
  if (message === "stop") stopped = true;
  else void poll(message);
});
