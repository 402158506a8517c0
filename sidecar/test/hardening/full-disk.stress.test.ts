/**
 * A full data disk: the BUILT sidecar runs with its data dir on a small tmpfs that the test fills under
 * load, authenticated (`/evaluate`, each decision a replay entry and an audit record) and unauthenticated (wrong-key
 * requests, each a security event). While the disk is full:
 * - nothing that is not on disk is answered 200: the writes that fail answer 503 `replay store unavailable`, and every
 *   executionId answered 200 is, after a SIGKILL and a restart, refused as a replay with its audit record;
 * - the process neither crashes nor hangs: `/health` answers within a second and says `store.status: "error"`;
 * - once space is freed, the same process answers 200 again within seconds, and `/health` says `ok` again.
 * Except for one documented crash (docs/sidecar.md, "Known limit"): lmdb-js aborts the process now and then after a
 * failed page write (a heap overflow in its own error message, scripts/repro/lmdb-full-disk-abort.mjs). When the
 * sidecar dies of exactly that (SIGABRT, lmdb-js's write error, then glibc's heap check), the test says so and checks
 * what still holds: after a restart with space freed, nothing answered 200 was lost. Any other exit fails.
 *
 * Mounting a tmpfs needs root (tests and CI run as root here); elsewhere the test is skipped, saying why.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertSidecarBuilt,
  killAllBuiltSidecars,
  KeepAliveClient,
  startBuiltSidecar,
  type BuiltSidecar,
} from "../support/built-sidecar.js";
import { API_KEY, REPLAY_BODY, auditPath, evaluateBody, mapLimit, surfaceAEnv } from "../durability/load.js";

const TMPFS_BYTES = 6 * 1024 * 1024;
/** Room left for the sidecar once the ballast file is written: enough for a few thousand decisions, then full. */
const HEADROOM_BYTES = 768 * 1024;
/** Bounds of the fill phase: it stops at this many 503s, or this many requests, or this long. */
const WANTED_REFUSALS = 200;
const MAX_REQUESTS = 30_000;
const FILL_DEADLINE_MS = 60_000;
const IN_FLIGHT = 16;
const UNAVAILABLE = { error: "replay store unavailable" };

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** lmdb-js's line for a failed page write (the native code's stderr). */
const LMDB_WRITE_ERROR = "Write error: ";
/** glibc's heap checks that the overflow trips, one of several, on a line of its own at the end of the output. */
const GLIBC_HEAP_ABORT =
  /Fatal glibc error: malloc assertion failure in \w+|malloc\(\): (?:corrupted|invalid) [a-z ]+|free\(\): invalid [a-z ]+|double free or corruption/;

/** Whether `sidecar` died of lmdb-js's documented abort (waiting a little for its exit), not of anything else. */
async function diedOfLmdbAbort(sidecar: BuiltSidecar): Promise<boolean> {
  await Promise.race([sidecar.closed, sleep(5_000)]);
  const output = sidecar.output();
  return sidecar.child.signalCode === "SIGABRT" && output.includes(LMDB_WRITE_ERROR) && GLIBC_HEAP_ABORT.test(output);
}

interface Health {
  readonly store: { readonly status: string; readonly problem?: string };
  readonly status: string;
}

async function timedHealth(client: KeepAliveClient): Promise<{ readonly ms: number; readonly health: Health }> {
  const started = performance.now();
  const answer = await client.json("GET", "/health");
  expect(answer.status).toBe(200);
  return { ms: performance.now() - started, health: answer.body as Health };
}

describe.skipIf(!isRoot)("a full data disk (built sidecar, tmpfs)", () => {
  let mount: string;
  let sidecar: BuiltSidecar | undefined;

  beforeAll(async () => {
    assertSidecarBuilt();
    mount = await mkdtemp(join(tmpdir(), "writ-full-disk-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${TMPFS_BYTES}`, "tmpfs", mount]);
  });
  afterAll(async () => {
    await killAllBuiltSidecars();
    if (mount !== undefined) {
      execFileSync("umount", ["-l", mount]);
      await rm(mount, { recursive: true, force: true });
    }
  });

  it("answers 503 for what it cannot write, stays up, says why on /health, recovers when space returns, and lost nothing answered", async () => {
    const dataDir = join(mount, "data");
    // glibc writes its abort message to the terminal unless told to write it to stderr, where the test reads it.
    const env = {
      ...(await surfaceAEnv({ SERVICE_DATA_DIR: dataDir, SERVICE_AUDIT_CHECKPOINT_INTERVAL_MS: "200" })),
      LIBC_FATAL_STDERR_: "1",
    };
    sidecar = await startBuiltSidecar(env);
    const client = new KeepAliveClient(sidecar.url, API_KEY, IN_FLIGHT);
    const intruder = new KeepAliveClient(sidecar.url, "wrong-key-0123456789abcdef", 4);
    const fresh = (): KeepAliveClient => new KeepAliveClient(sidecar!.url, API_KEY, 1);
    const acknowledged: string[] = [];
    // Leave HEADROOM_BYTES free on the tmpfs: the rest is ballast, removed later to free space.
    const ballast = join(mount, "ballast");
    let unauthenticated: Promise<void> | undefined;
    try {
      const { bavail, bsize } = statfsSync(mount);
      await writeFile(ballast, Buffer.alloc(Math.max(0, bavail * bsize - HEADROOM_BYTES)));

      let refused = 0;
      let sent = 0;
      const others: string[] = [];
      const deadline = Date.now() + FILL_DEADLINE_MS;
      unauthenticated = (async () => {
        while (refused < WANTED_REFUSALS && Date.now() < deadline) {
          const answer = await intruder.request("GET", "/audit/decisions");
          if (answer.status !== 401) others.push(`wrong key: ${answer.status} ${answer.text.slice(0, 120)}`);
        }
      })();
      // Awaited below (its failure fails the test there); should lmdb-js's abort end its connection while the load runs,
      // the rejection comes before that await, and must not count as unhandled meanwhile.
      unauthenticated.catch(() => undefined);
      await mapLimit(
        Array.from({ length: MAX_REQUESTS }, (_, i) => `full-disk-${i}`),
        IN_FLIGHT,
        async (id) => {
          if (refused >= WANTED_REFUSALS || Date.now() > deadline) return;
          sent += 1;
          const answer = await client.json("POST", "/evaluate", JSON.parse(evaluateBody(id, "approved")));
          if (answer.status === 200) acknowledged.push(id);
          else if (answer.status === 503 && JSON.stringify(answer.body) === JSON.stringify(UNAVAILABLE)) refused += 1;
          else others.push(`${id}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 120)}`);
        },
      );
      await unauthenticated;
      expect(others, "every answer is a 200, a 401 for the wrong key, or the table's 503").toEqual([]);
      expect(refused, `the disk filled up (${sent} requests, ${acknowledged.length} answered 200)`).toBeGreaterThanOrEqual(WANTED_REFUSALS);
      expect(acknowledged.length).toBeGreaterThan(100);

      // Full: alive, answering /health from a fresh connection within a second, naming the problem.
      expect(sidecar.child.exitCode).toBeNull();
      const full = await timedHealth(fresh());
      expect(full.ms).toBeLessThan(1_000);
      expect(full.health.store.status).toBe("error");
      // ENOSPC as a rule; a write of a page the kernel cannot back may also come back as EIO on tmpfs.
      expect(full.health.store.problem).toMatch(/^data dir write failed: /);

      // Space returns: the same process answers 200 again within seconds, by itself.
      await rm(ballast);
      const recoveredBy = Date.now() + 10_000;
      let after: { status: number; body: unknown } | undefined;
      for (let i = 0; Date.now() < recoveredBy; i += 1) {
        after = await client.json("POST", "/evaluate", JSON.parse(evaluateBody(`after-space-${i}`, "approved")));
        if (after.status === 200) {
          acknowledged.push(`after-space-${i}`);
          break;
        }
        await sleep(100);
      }
      expect(after?.status, JSON.stringify(after?.body)).toBe(200);
      let healthy: Health | undefined;
      // `ok` once writes have succeeded for DEFAULT_RECOVERY_HOLD_MS (5 s) with no failure.
      for (const until = Date.now() + 15_000; Date.now() < until; await sleep(200)) {
        healthy = (await timedHealth(fresh())).health;
        if (healthy.store.status === "ok") break;
      }
      expect(healthy?.store.status).toBe("ok");
      expect(sidecar.child.exitCode).toBeNull();
    } catch (e) {
      if (!(await diedOfLmdbAbort(sidecar))) {
        throw new Error(
          `${(e as Error).message}\n--- sidecar (exit ${sidecar.child.exitCode} ${sidecar.child.signalCode}) output ---\n${sidecar.output()}`,
          { cause: e },
        );
      }
      await unauthenticated?.catch(() => undefined); // its connection went with the process
      console.warn(
        `full disk: the sidecar died of lmdb-js's abort after a failed page write (docs/sidecar.md, "Known limit"), ${acknowledged.length} decisions answered 200 before; checking that none was lost`,
      );
      await rm(ballast, { force: true });
    } finally {
      client.close();
      intruder.close();
    }

    // Nothing answered 200 was lost: after SIGKILL (or the abort) and a restart, each is a replay with its audit record.
    try {
      await sidecar.kill();
      sidecar = await startBuiltSidecar(env);
      const again = new KeepAliveClient(sidecar.url, API_KEY, IN_FLIGHT);
      try {
        const lost = (
          await mapLimit(acknowledged, IN_FLIGHT, async (id) => {
            const replay = await again.json("POST", "/evaluate", JSON.parse(evaluateBody(id, "approved")));
            const audit = await again.json("GET", auditPath(id));
            const ok = replay.status === 422 && JSON.stringify(replay.body) === JSON.stringify(REPLAY_BODY) && audit.status === 200;
            return ok ? null : `${id}: replay ${replay.status}, audit ${audit.status}`;
          })
        ).filter((line) => line !== null);
        expect(lost).toEqual([]);
      } finally {
        again.close();
      }
    } catch (e) {
      throw new Error(
        `${(e as Error).message}\n--- sidecar (exit ${sidecar.child.exitCode} ${sidecar.child.signalCode}) output ---\n${sidecar.output()}`,
        { cause: e },
      );
    }
  }, 150_000);
});
