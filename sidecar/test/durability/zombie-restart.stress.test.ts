/**
 * A dead sidecar is not a live one (docs/audit.md, "One live sidecar per log"): the BUILT sidecar runs under a parent
 * that never reaps it (support/unreaped.ts), is SIGKILLed under `POST /evaluate` load, and stays a zombie. A sidecar
 * started at once on the same data dir, while the first is still a zombie, starts (not `INSTANCE_IN_USE`), and loses
 * nothing: every executionId answered 200 before the kill is refused as a replay with its audit record, and the audit
 * record log's export verifies and holds every one of them (the records the dead process held in memory are taken in
 * from its open mark).
 *
 * Needs `npm run build` and /proc (Linux).
 */
import { createPublicKey } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExportVerifier, loadPublicKeyPem } from "@writ/runtime";
import { checkExport } from "../support/export-check.js";
import {
  SIDECAR_MAIN,
  assertSidecarBuilt,
  killAllBuiltSidecars,
  KeepAliveClient,
  listeningUrl,
  startBuiltSidecar,
} from "../support/built-sidecar.js";
import { endUnreaped, killIntoZombie, processState, startUnreaped, type Unreaped } from "../support/unreaped.js";
import { API_KEY, REPLAY_BODY, auditPath, evaluateBody, mapLimit, parse, show, surfaceAEnv } from "./load.js";

const IN_FLIGHT = 16;
/** The kill comes in the callback that reads this many 200s. */
const KILL_AT_ACK = 400;
const LOAD_DEADLINE_MS = 30_000;

describe.skipIf(!existsSync("/proc/self/stat"))("a restart while the killed sidecar is a zombie (built sidecar)", () => {
  let dataDir: string | undefined;
  let first: Unreaped | undefined;

  beforeAll(async () => {
    assertSidecarBuilt();
    dataDir = await mkdtemp(join(tmpdir(), "writ-zombie-"));
  });
  afterAll(async () => {
    if (first !== undefined) await endUnreaped(first);
    await killAllBuiltSidecars();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it("starts at once, not refused as another live sidecar, and every decision answered 200 is there", async () => {
    const env = await surfaceAEnv({ SERVICE_DATA_DIR: dataDir! });
    first = await startUnreaped(process.execPath, [SIDECAR_MAIN], { env: { PATH: process.env["PATH"] ?? "", ...env } });
    let url: string | null = null;
    for (const until = Date.now() + 45_000; url === null && Date.now() < until; await sleep(20)) url = listeningUrl(first.output(), "A");
    expect(url, `the first sidecar did not listen:\n${first.output()}`).not.toBeNull();

    const client = new KeepAliveClient(url!, API_KEY, IN_FLIGHT);
    const acknowledged: string[] = [];
    const unexpected: string[] = [];
    let killed = false;
    const deadline = Date.now() + LOAD_DEADLINE_MS;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async (_, w) => {
        for (let n = 0; !killed && Date.now() < deadline; n++) {
          const id = `zombie-w${w}-${n}`;
          let answer;
          try {
            answer = await client.request("POST", "/evaluate", evaluateBody(id, "approved"));
          } catch (error) {
            if (!killed) unexpected.push(`${id}: ${(error as Error).message} before the kill`);
            return;
          }
          if (answer.status !== 200) {
            unexpected.push(`${id}: ${show(answer)}`);
            return;
          }
          acknowledged.push(id);
          if (acknowledged.length === KILL_AT_ACK && !killed) {
            killed = true;
            process.kill(first!.pid, "SIGKILL");
          }
        }
      }),
    );
    client.close();
    expect(unexpected.slice(0, 10)).toEqual([]);
    expect(killed, `${acknowledged.length} answered 200 within ${LOAD_DEADLINE_MS} ms, not ${KILL_AT_ACK}`).toBe(true);
    await killIntoZombie(first.pid);

    const second = await startBuiltSidecar(env);
    // Not vacuous: the first was still a zombie while the second started.
    expect(processState(first.pid)).toBe("Z");
    const again = new KeepAliveClient(second.url, API_KEY, IN_FLIGHT);
    try {
      const lost = (
        await mapLimit(acknowledged, IN_FLIGHT, async (id) => {
          const replay = await again.request("POST", "/evaluate", evaluateBody(id, "approved"));
          const audit = await again.request("GET", auditPath(id));
          const refused = replay.status === 422 && JSON.stringify(parse(replay.text)) === JSON.stringify(REPLAY_BODY);
          return refused && audit.status === 200 ? null : `${id}: sent again ${show(replay)}; audit ${show(audit)}`;
        })
      ).filter((line) => line !== null);
      expect(lost.slice(0, 10), `${lost.length} of ${acknowledged.length} acknowledged decisions lost`).toEqual([]);

      const key = loadPublicKeyPem(
        createPublicKey(await readFile(join(dataDir!, "signing.key"), "utf8"))
          .export({ type: "spki", format: "pem" })
          .toString(),
      );
      const response = await fetch(`${second.url}/audit/export`, { headers: { authorization: `Bearer ${API_KEY}` } });
      const { report, decisions } = checkExport(await response.text(), new ExportVerifier([key]));
      expect(report.failures.slice(0, 5)).toEqual([]);
      expect(acknowledged.filter((id) => !decisions.has(id)).slice(0, 10)).toEqual([]);
    } finally {
      again.close();
      await second.kill();
    }
  }, 180_000);
});
