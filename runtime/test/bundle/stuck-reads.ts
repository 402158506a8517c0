/**
 * Reads that really block, for the tests of bundle loading: FIFOs (whose blocking open waits for a writer), and the
 * libuv thread pool held by such opens, so that every file-system call of this process waits as behind a hung disk.
 * Used by runtime/test/bundle and sidecar/test/hardening/bundles-*.test.ts.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** A FIFO at `path` (node has no mkfifo of its own). */
export function mkfifo(path: string): void {
  execFileSync("mkfifo", [path]);
}

/**
 * Holds every thread of libuv's pool (UV_THREADPOOL_SIZE, default 4) in an open() of a FIFO that has no writer, until
 * the returned `release` is awaited. Meanwhile no fs call of this process completes; timers and sockets go on.
 */
export async function holdThreadPool(dir: string): Promise<() => Promise<void>> {
  const size = Number(process.env["UV_THREADPOOL_SIZE"] ?? 4);
  const fifos = Array.from({ length: size }, (_, i) => join(dir, `held-${i}`));
  for (const fifo of fifos) mkfifo(fifo);
  const opens = fifos.map((fifo) => open(fifo, "r"));
  // Until each open waits in the kernel: a non-blocking writer open succeeds only once a reader is there.
  await sleep(50);
  return async () => {
    for (const fifo of fifos) {
      for (;;) {
        try {
          closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
          break;
        } catch (e) {
          if ((e as { code?: unknown }).code !== "ENXIO") throw e;
          await sleep(5);
        }
      }
    }
    for (const handle of await Promise.all(opens)) await handle.close();
    for (const fifo of fifos) rmSync(fifo, { force: true });
  };
}

/** `promise`, or a rejection naming `what` once `ms` have passed (a hang fails the test at once, not at its timeout). */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
