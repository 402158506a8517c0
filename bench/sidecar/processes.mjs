/**
 * `node processes.mjs <count> <sidecar main.js>`: that many sidecar processes sharing one listening port through
 * node:cluster (each accepting from it), each on a data dir of its own (`<SERVICE_DATA_DIR>-<i>`).
 * What several event loops per host would serve (docs/benchmarks.md, "Several event loops"), not a configuration to
 * run: an execution could be consumed once per process, as each has its own replay store. A SIGTERM or SIGINT is
 * passed to every process; this one exits when they have.
 */
import cluster from "node:cluster";

const [count, main] = [Number(process.argv[2]), process.argv[3]];
if (!Number.isInteger(count) || count < 1 || main === undefined) {
  process.stderr.write("usage: node processes.mjs <count> <sidecar main.js>\n");
  process.exit(2);
}
// As the sidecar's own supervisor does (sidecar/src/processes/supervisor.ts): each process accepts for itself.
cluster.schedulingPolicy = cluster.SCHED_NONE;
cluster.setupPrimary({ exec: main, args: [] });
for (let i = 0; i < count; i++) cluster.fork({ SERVICE_DATA_DIR: `${process.env["SERVICE_DATA_DIR"]}-${i}` });
const stop = () => {
  for (const worker of Object.values(cluster.workers ?? {})) worker?.kill("SIGTERM");
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
let alive = count;
cluster.on("exit", () => {
  alive -= 1;
  if (alive === 0) process.exit(0);
});
