/** Another process that tries a data dir's lock (storage/lmdb/data-dir-lock.ts) as a sidecar's record log takes it. */
import { createRequire } from "node:module";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { LOCK_FILE } from "../../src/storage/lmdb/data-dir-lock.js";
import { endUnreaped, startUnreaped, type Unreaped } from "./unreaped.js";

const LOCK_MODULE = createRequire(import.meta.url).resolve("fs-native-extensions");

/**
 * A process, under a parent that never reaps it (unreaped.ts), that tries the lock of `dir` and holds it if it got it.
 * @throws Error unless it got it (`expected` "locked") or was refused it (`expected` "refused")
 */
export async function startLockHolder(dir: string, expected: "locked" | "refused" = "locked"): Promise<Unreaped> {
  const script = `const fs = require("node:fs"); const locked = require(${JSON.stringify(LOCK_MODULE)}).tryLock(fs.openSync(${JSON.stringify(join(dir, LOCK_FILE))}, "a")); console.log(locked ? "locked" : "refused"); setInterval(() => {}, 60000);`;
  const holder = await startUnreaped(process.execPath, ["-e", script]);
  let said: string | undefined;
  for (const until = Date.now() + 10_000; Date.now() < until && said === undefined; await sleep(10)) {
    said = /\n(locked|refused)\n/.exec(holder.output())?.[1];
  }
  if (said !== expected) {
    await endUnreaped(holder);
    throw new Error(`the lock holder said ${said ?? "nothing"}, not ${expected}:\n${holder.output()}`);
  }
  return holder;
}
