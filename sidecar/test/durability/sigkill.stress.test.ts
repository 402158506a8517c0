/**
 * Acknowledged means durable, end to end (docs/replay.md, spec 2.12): the BUILT sidecar is SIGKILLed under
 * concurrent `POST /evaluate` load, over and over on one data dir. After every restart, each executionId that was
 * answered 200 before the kill is refused as a replay (422 INV-013) and its audit record is there, with the status
 * and signature that were answered.
 *
 * Requests in flight at the kill were never answered: they may have been decided or not. They are resolved after
 * the restart by sending them again: a 422 means the decision was stored, and then its audit record must be
 * stored too (both are written in one LMDB transaction); a 200 decides them now. So at the end every executionId
 * ever sent is decided exactly once, and `/audit/stats` must count exactly that many decisions. After every restart the
 * tamper-evident audit log's export verifies end to end, and holds every decision acknowledged so far.
 *
 * SIGKILL loses what the process had not handed to the kernel; it does not lose the page cache. So this catches an
 * answer sent before its write was committed, not a missing fsync (that needs a power-loss simulation).
 *
 * The starts alternate between signing on the event loop and on two signing threads (load.ts `signingThreadsAt`).
 *
 * Needs `npm run build` (root `npm test` builds first). Replay a failing run's kill timings and samples with
 * WRIT_SIGKILL_SEED=<seed>.
 */
import { createPublicKey } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExportVerifier, loadPublicKeyPem } from "@writ/runtime";
import { checkExport } from "../support/export-check.js";
import {
  assertSidecarBuilt,
  killAllBuiltSidecars,
  KeepAliveClient,
  startBuiltSidecar,
  type BuiltSidecar,
  type HttpAnswer,
} from "../support/built-sidecar.js";
import {
  API_KEY,
  EXPECTED_STATUS,
  REPLAY_BODY,
  SIGNAL_SETS,
  auditPath,
  evaluateBody,
  isRecord,
  mapLimit,
  parse,
  prng,
  show,
  signingThreadsAt,
  surfaceAEnv,
  type SignalSet,
} from "./load.js";

const CYCLES = 18;
/** Requests in flight during the load phase of a cycle. */
const IN_FLIGHT = 24;
/**
 * One cycle in four: the kill lands a random 0 to 300 ms after the cycle's first 200 (every cycle kills a sidecar
 * under load). The others: it is sent the instant the client has read the k-th 200 (k random, 1 to 120), the moment
 * most likely to catch an answer sent before its write was committed (a window of well under a millisecond).
 */
const MAX_KILL_DELAY_MS = 300;
const MAX_KILL_AT_ACK = 120;
/** A cycle whose first 200 takes longer than this fails: the sidecar is not answering. */
const FIRST_ACK_TIMEOUT_MS = 10_000;
/** Acknowledged ids of earlier cycles checked again after each restart (the previous cycle's are all checked). */
const EARLIER_SAMPLE = 64;
/** Not vacuous: at least this many 200s overall (typically 1,800 to 2,500; every cycle must have one anyway). */
const MIN_ACKS = 500;

interface Sent {
  readonly id: string;
  readonly signals: SignalSet;
}
interface Ack extends Sent {
  readonly status: string;
  readonly signature: string;
  readonly cycle: number;
}

const isReplayRefusal = (answer: HttpAnswer): boolean =>
  answer.status === 422 && JSON.stringify(parse(answer.text)) === JSON.stringify(REPLAY_BODY);

describe("SIGKILL under load (built sidecar)", () => {
  let dataDir: string | undefined;
  /** Set by afterAll: a body still looping after a test timeout must not start another sidecar. */
  let stopped = false;

  beforeAll(async () => {
    assertSidecarBuilt();
    dataDir = await mkdtemp(join(tmpdir(), "writ-durability-sigkill-"));
  });
  afterAll(async () => {
    // Also after a test timeout: vitest runs afterAll while the timed-out body may still be looping.
    stopped = true;
    await killAllBuiltSidecars();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it(`every executionId answered 200 is refused as a replay and audited after a restart (${CYCLES} SIGKILLs)`, async () => {
    const seed = Number(process.env["WRIT_SIGKILL_SEED"] ?? Date.now() % 2 ** 31);
    const random = prng(seed);
    const where = (cycle: number | string): string => `seed ${seed} (WRIT_SIGKILL_SEED), cycle ${cycle}`;
    const env = await surfaceAEnv({ SERVICE_DATA_DIR: dataDir! });
    const started = Date.now();
    const acknowledged: Ack[] = [];
    /** Every executionId sent: each is decided exactly once by the end. */
    const sentIds = new Set<string>();
    const acksPerCycle: number[] = [];
    let inDoubtTotal = 0;
    let inDoubtStored = 0;
    let previous: { readonly acks: readonly Ack[]; readonly inDoubt: readonly Sent[] } = { acks: [], inDoubt: [] };
    /** The record log's size at each restart's check. */
    const logChecks: number[] = [];

    /** After a restart: the previous cycle's acknowledgements, a sample of older ones, and its requests in doubt. */
    const verify = async (sidecar: BuiltSidecar, cycle: number): Promise<void> => {
      const client = new KeepAliveClient(sidecar.url, API_KEY, IN_FLIGHT);
      try {
        const older = acknowledged.filter((a) => a.cycle < cycle - 1);
        const sample: Ack[] = [];
        for (let i = 0; i < Math.min(EARLIER_SAMPLE, older.length); i++) sample.push(older[Math.floor(random() * older.length)]!);
        const checks = [...previous.acks, ...sample];
        const lost = (
          await mapLimit(checks, IN_FLIGHT, async (ack): Promise<string[]> => {
            const out: string[] = [];
            const replay = await client.request("POST", "/evaluate", evaluateBody(ack.id, ack.signals));
            if (!isReplayRefusal(replay)) out.push(`${ack.id} (answered 200 in cycle ${ack.cycle}): sent again, answered ${show(replay)}`);
            const audit = await client.request("GET", auditPath(ack.id));
            const body = parse(audit.text);
            const record = isRecord(body) ? body : {};
            const signature = isRecord(record["attestation"]) ? record["attestation"]["signature"] : undefined;
            if (
              audit.status !== 200 ||
              record["executionId"] !== ack.id ||
              record["decision"] !== ack.status ||
              signature !== ack.signature
            ) {
              out.push(`${ack.id} (answered 200 ${ack.status} in cycle ${ack.cycle}): audit answered ${show(audit)}`);
            }
            return out;
          })
        ).flat();
        expect(
          lost.slice(0, 20),
          `${where(cycle)}: ${lost.length} problems (first 20 shown) among ${checks.length} acknowledged executionIds checked after the restart`,
        ).toEqual([]);

        // Requests cut by the kill: decided or not, but never decided without their audit record.
        const doubtful = (
          await mapLimit(previous.inDoubt, IN_FLIGHT, async (sent): Promise<string[]> => {
            const again = await client.request("POST", "/evaluate", evaluateBody(sent.id, sent.signals));
            const audit = await client.request("GET", auditPath(sent.id));
            const answered = parse(again.text);
            const record = parse(audit.text);
            const audited =
              audit.status === 200 &&
              isRecord(record) &&
              record["executionId"] === sent.id &&
              record["decision"] === EXPECTED_STATUS[sent.signals];
            if (isReplayRefusal(again)) {
              inDoubtStored += 1;
              return audited
                ? []
                : [`${sent.id}: in flight at the kill and found consumed after the restart, but audit answered ${show(audit)}`];
            }
            if (again.status === 200 && isRecord(answered) && answered["status"] === EXPECTED_STATUS[sent.signals]) {
              return audited ? [] : [`${sent.id}: decided after the restart, but audit answered ${show(audit)}`];
            }
            return [`${sent.id}: in flight at the kill, sent again after the restart: ${show(again)}`];
          })
        ).flat();
        expect(
          doubtful.slice(0, 20),
          `${where(cycle)}: ${doubtful.length} problems (first 20 shown) among ${previous.inDoubt.length} requests in flight at the kill`,
        ).toEqual([]);
        await logVerifies(sidecar, cycle);
      } finally {
        client.close();
      }
    };

    /**
     * The tamper-evident record log after the restart: its export verifies end to end against the signing
     * key, and every decision acknowledged so far is in it.
     */
    const logVerifies = async (sidecar: BuiltSidecar, cycle: number): Promise<void> => {
      const key = loadPublicKeyPem(
        createPublicKey(await readFile(join(dataDir!, "signing.key"), "utf8"))
          .export({ type: "spki", format: "pem" })
          .toString(),
      );
      const response = await fetch(`${sidecar.url}/audit/export`, { headers: { authorization: `Bearer ${API_KEY}` } });
      const { report, decisions: logged } = checkExport(await response.text(), new ExportVerifier([key]));
      expect(report.failures.slice(0, 5), `${where(cycle)}: the audit log export does not verify after the restart`).toEqual([]);
      const missing = acknowledged.filter((ack) => !logged.has(ack.id)).map((ack) => ack.id);
      expect(missing.slice(0, 20), `${where(cycle)}: ${missing.length} acknowledged decisions missing from the audit log`).toEqual([]);
      logChecks.push(report.entries);
    };

    const start = async (cycle: number): Promise<BuiltSidecar> => {
      if (stopped) throw new Error("stopped: the test has ended (timeout?)");
      return startBuiltSidecar({ ...env, SERVICE_SIGNING_THREADS: signingThreadsAt(cycle) });
    };

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const sidecar = await start(cycle);
      try {
        await verify(sidecar, cycle);

        const client = new KeepAliveClient(sidecar.url, API_KEY, IN_FLIGHT);
        const acks: Ack[] = [];
        const inDoubt: Sent[] = [];
        const unexpected: string[] = [];
        let killed = false;
        let firstAck: () => void = () => undefined;
        const acked = new Promise<void>((resolve) => (firstAck = resolve));
        const killAtAck = cycle % 4 === 0 ? null : 1 + Math.floor(random() * MAX_KILL_AT_ACK);
        let killedAtAck: () => void = () => undefined;
        const killedOnAck = new Promise<void>((resolve) => (killedAtAck = resolve));
        const worker = async (w: number): Promise<void> => {
          for (let n = 0; !killed; n++) {
            const sent: Sent = { id: `sigkill-${seed}-c${cycle}-w${w}-${n}`, signals: SIGNAL_SETS[(w + n) % SIGNAL_SETS.length]! };
            sentIds.add(sent.id);
            let answer: HttpAnswer;
            try {
              answer = await client.request("POST", "/evaluate", evaluateBody(sent.id, sent.signals));
            } catch (e) {
              if (killed) inDoubt.push(sent);
              else unexpected.push(`${sent.id}: ${(e as Error).message} before the kill`);
              return;
            }
            const body = parse(answer.text);
            const attestation = isRecord(body) && isRecord(body["attestation"]) ? body["attestation"] : {};
            const signature = attestation["signature"];
            if (
              answer.status !== 200 ||
              !isRecord(body) ||
              body["status"] !== EXPECTED_STATUS[sent.signals] ||
              attestation["executionId"] !== sent.id ||
              typeof signature !== "string"
            ) {
              unexpected.push(`${sent.id} (${sent.signals}): ${show(answer)}`);
              return;
            }
            acks.push({ ...sent, status: EXPECTED_STATUS[sent.signals], signature, cycle });
            firstAck();
            if (acks.length === killAtAck && !killed) {
              // Synchronously, in the callback that read the answer: no other request completes in between.
              killed = true;
              sidecar.child.kill("SIGKILL");
              killedAtAck();
            }
          }
        };
        const workers = Array.from({ length: IN_FLIGHT }, (_, w) => worker(w));
        const patience = new AbortController();
        const loading = await Promise.race([
          acked.then(() => "acknowledged" as const),
          Promise.all(workers).then(() => "workers stopped" as const),
          sleep(FIRST_ACK_TIMEOUT_MS, undefined, { signal: patience.signal }).then(
            () => "timeout" as const,
            () => "acknowledged" as const,
          ),
        ]);
        patience.abort();
        if (loading === "acknowledged") {
          // At the k-th 200, or (fewer answers than k) after the longest timer delay.
          if (killAtAck !== null) await Promise.race([killedOnAck, sleep(MAX_KILL_DELAY_MS)]);
          else await sleep(Math.floor(random() * (MAX_KILL_DELAY_MS + 1)));
        }
        killed = true;
        const exit = await sidecar.kill();
        await Promise.all(workers);
        client.close();

        const log = `\n--- sidecar output ---\n${sidecar.output().slice(-4_000)}`;
        expect(exit, `${where(cycle)}: the sidecar must die by our SIGKILL${log}`).toEqual({ code: null, signal: "SIGKILL" });
        expect(
          unexpected.slice(0, 20),
          `${where(cycle)}: ${unexpected.length} unexpected answers under load (first 20 shown; ${acks.length} acknowledged)${log}`,
        ).toEqual([]);
        expect(loading, `${where(cycle)}: no 200 within ${FIRST_ACK_TIMEOUT_MS} ms of load${log}`).toBe("acknowledged");
        acknowledged.push(...acks);
        acksPerCycle.push(acks.length);
        inDoubtTotal += inDoubt.length;
        previous = { acks, inDoubt };
      } finally {
        await sidecar.kill();
      }
    }

    // The last restart: the last cycle's acknowledgements, then the count of every decision ever made.
    const sidecar = await start(CYCLES);
    try {
      await verify(sidecar, CYCLES);
      const client = new KeepAliveClient(sidecar.url, API_KEY, 1);
      try {
        const stats = await client.request("GET", "/audit/stats");
        const body = parse(stats.text);
        expect(
          stats.status === 200 && isRecord(body) ? body["total_decisions"] : show(stats),
          `${where("final")}: each of the ${sentIds.size} executionIds sent is decided exactly once (${acknowledged.length} answered 200 under load, ${inDoubtTotal} in flight at a kill)`,
        ).toBe(String(sentIds.size));
      } finally {
        client.close();
      }
    } finally {
      await sidecar.kill();
    }

    console.log(
      `sigkill: seed ${seed}, ${CYCLES} kills in ${Date.now() - started} ms; ${acknowledged.length} acknowledged (per cycle: ${acksPerCycle.join(" ")}); ` +
        `${inDoubtTotal} in flight at a kill, ${inDoubtStored} of them found decided after the restart; ${sentIds.size} executionIds in all; ` +
        `the audit log verified after every restart, last at ${logChecks.at(-1)} entries`,
    );
    // Not vacuous: the kills landed while the sidecar was answering, and requests were cut by them.
    expect(
      acknowledged.length,
      `${where("final")}: only ${acknowledged.length} executionIds were acknowledged over ${CYCLES} cycles`,
    ).toBeGreaterThanOrEqual(MIN_ACKS);
    expect(inDoubtTotal, `${where("final")}: no request was ever in flight at a kill`).toBeGreaterThan(0);
  }, 180_000);
});
