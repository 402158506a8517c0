/**
 * Overrides and confirmations are durable with their audit records: the BUILT sidecar is SIGKILLed while
 * 400 overrides and 400 confirmations are in flight, 10 times on one data dir. After each restart:
 * - every override answered 200 has its audit record (approver, role, reason and the signed record that was answered);
 * - every override in flight at the kill, sent again, is either resolved now (200) or refused as already resolved
 *   (409), and then its audit record is there: an override is never in force without its record;
 * - the same for confirmations: none answers 409 "already confirmed" without its audit record and signed proof, and
 *   one cut by the kill before its write can be confirmed again.
 *
 * The starts alternate between signing on the event loop and on two signing threads (load.ts `signingThreadsAt`).
 *
 * Needs `npm run build` (root `npm test` builds first). Replay a failing run with WRIT_CRASH_SEED=<seed>.
 */
import { mkdtemp, rm } from "node:fs/promises";
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
  type HttpAnswer,
} from "../support/built-sidecar.js";
import {
  API_KEY,
  auditPath,
  evaluateBody,
  isRecord,
  mapLimit,
  parse,
  prng,
  show,
  signingThreadsAt,
  surfaceAEnv,
} from "../durability/load.js";

const CYCLES = 10;
/** Overrides, and confirmations, in flight at once when the kill lands. */
const IN_FLIGHT = 400;
/** The kill lands the instant the client reads the k-th 200 of the cycle (k random from 1 to this). */
const MAX_KILL_AT_ACK = 300;

const ALREADY_RESOLVED = { error: "Override already resolved" };
const ALREADY_CONFIRMED = { error: "[INTEGRITY_ALREADY_CONFIRMED@confirm-execution] execution already confirmed" };

interface Operation {
  readonly kind: "override" | "confirmation";
  readonly executionId: string;
  readonly path: string;
  readonly body: string;
}

/** What a 200 answered: the signature the audit record must carry. */
interface Acknowledged extends Operation {
  readonly signature: string;
}

const same = (answer: HttpAnswer, body: unknown): boolean => JSON.stringify(parse(answer.text)) === JSON.stringify(body);

/** The signature an answer of `/override` or `/confirm-execution` carries, or undefined when it is not a 200 of its kind. */
function answeredSignature(kind: Operation["kind"], answer: HttpAnswer): string | undefined {
  if (answer.status !== 200) return undefined;
  const body = parse(answer.text);
  if (!isRecord(body)) return undefined;
  if (kind === "override")
    return isRecord(body["record"]) && typeof body["record"]["signature"] === "string" ? body["record"]["signature"] : undefined;
  const proof = typeof body["proof"] === "string" ? parse(body["proof"]) : undefined;
  return isRecord(proof) && typeof proof["signature"] === "string" ? proof["signature"] : undefined;
}

function overrideBody(executionId: string): string {
  return JSON.stringify({
    executionId,
    approved: true,
    approvedBy: `approver-of-${executionId}`,
    approverRole: "treasury-lead",
    reason: `checked ${executionId}`,
  });
}

function confirmBody(attestation: Record<string, unknown>): string {
  const binding = isRecord(attestation["actionBinding"]) ? attestation["actionBinding"] : {};
  return JSON.stringify({
    attestation,
    executedAction: {
      actionType: attestation["actionType"],
      actionId: `transfer-${String(attestation["executionId"])}`,
      actionTimestamp: new Date().toISOString(),
      actionDetails: binding,
    },
  });
}

describe("SIGKILL during overrides and confirmations (built sidecar)", () => {
  let dataDir: string | undefined;
  let stopped = false;

  beforeAll(async () => {
    assertSidecarBuilt();
    dataDir = await mkdtemp(join(tmpdir(), "writ-crash-overrides-"));
  });
  afterAll(async () => {
    stopped = true;
    await killAllBuiltSidecars();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it(`no override or confirmation is in force without its audit record (${CYCLES} SIGKILLs, ${IN_FLIGHT} of each in flight)`, async () => {
    const seed = Number(process.env["WRIT_CRASH_SEED"] ?? Date.now() % 2 ** 31);
    const random = prng(seed);
    const where = (cycle: number | string): string => `seed ${seed} (WRIT_CRASH_SEED), cycle ${cycle}`;
    const env = await surfaceAEnv({ SERVICE_DATA_DIR: dataDir! });
    const start = async (cycle: number): Promise<BuiltSidecar> => {
      if (stopped) throw new Error("stopped: the test has ended (timeout?)");
      return startBuiltSidecar({ ...env, SERVICE_SIGNING_THREADS: signingThreadsAt(cycle) });
    };
    let previous: { readonly acks: readonly Acknowledged[]; readonly inDoubt: readonly Operation[] } = { acks: [], inDoubt: [] };
    const totals = { acks: 0, inDoubt: 0, inDoubtFoundDone: 0 };

    /** The audit record of an operation's execution, checked against what was answered (when something was). */
    const auditProblem = async (client: KeepAliveClient, op: Operation, signature?: string): Promise<string | null> => {
      const audit = await client.request("GET", auditPath(op.executionId));
      const detail = parse(audit.text);
      const record = isRecord(detail) ? detail[op.kind] : undefined;
      if (audit.status !== 200 || !isRecord(record)) return `${op.kind} of ${op.executionId}: no audit record (${show(audit)})`;
      if (op.kind === "override") {
        const signed = isRecord(record["record"]) ? record["record"]["signature"] : undefined;
        const complete =
          record["approvedBy"] === `approver-of-${op.executionId}` &&
          record["approverRole"] === "treasury-lead" &&
          record["reason"] === `checked ${op.executionId}` &&
          typeof signed === "string" &&
          (signature === undefined || signed === signature);
        return complete
          ? null
          : `override of ${op.executionId}: audit record incomplete or not the one answered: ${JSON.stringify(record).slice(0, 300)}`;
      }
      const proof = isRecord(record["proof"]) ? record["proof"] : {};
      const complete = typeof proof["signature"] === "string" && (signature === undefined || proof["signature"] === signature);
      return complete
        ? null
        : `confirmation of ${op.executionId}: audit record without the proof answered: ${JSON.stringify(record).slice(0, 300)}`;
    };

    const verify = async (sidecar: BuiltSidecar, cycle: number): Promise<void> => {
      const client = new KeepAliveClient(sidecar.url, API_KEY, 32);
      try {
        const lost = (await mapLimit(previous.acks, 32, (ack) => auditProblem(client, ack, ack.signature))).filter((p) => p !== null);
        expect(
          lost.slice(0, 20),
          `${where(cycle)}: ${lost.length} of ${previous.acks.length} acknowledged operations lost their record`,
        ).toEqual([]);
        const doubtful = (
          await mapLimit(previous.inDoubt, 32, async (op): Promise<string | null> => {
            const again = await client.request("POST", op.path, op.body);
            const refused = same(again, op.kind === "override" ? ALREADY_RESOLVED : ALREADY_CONFIRMED);
            const signature = answeredSignature(op.kind, again);
            if (!refused && signature === undefined)
              return `${op.kind} of ${op.executionId}: in flight at the kill, sent again: ${show(again)}`;
            if (refused) totals.inDoubtFoundDone += 1;
            return auditProblem(client, op, signature);
          })
        ).filter((p) => p !== null);
        expect(
          doubtful.slice(0, 20),
          `${where(cycle)}: ${doubtful.length} of ${previous.inDoubt.length} operations in flight at the kill`,
        ).toEqual([]);
      } finally {
        client.close();
      }
    };

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const sidecar = await start(cycle);
      try {
        await verify(sidecar, cycle);
        // Decisions to act on: IN_FLIGHT pending ones to override, IN_FLIGHT approved ones to confirm.
        const setup = new KeepAliveClient(sidecar.url, API_KEY, 32);
        const ids = Array.from({ length: IN_FLIGHT * 2 }, (_, i) => `crash-${seed}-c${cycle}-${i}`);
        const decided = await mapLimit(ids, 32, async (id): Promise<Operation> => {
          const pending = Number(id.slice(id.lastIndexOf("-") + 1)) < IN_FLIGHT;
          const answer = await setup.request("POST", "/evaluate", evaluateBody(id, pending ? "pending" : "approved"));
          const body = parse(answer.text);
          if (answer.status !== 200 || !isRecord(body) || !isRecord(body["attestation"]))
            throw new Error(`${where(cycle)}: evaluate ${id}: ${show(answer)}`);
          return pending
            ? { kind: "override", executionId: id, path: "/override", body: overrideBody(id) }
            : { kind: "confirmation", executionId: id, path: "/confirm-execution", body: confirmBody(body["attestation"]) };
        });
        setup.close();

        const client = new KeepAliveClient(sidecar.url, API_KEY, IN_FLIGHT * 2);
        const acks: Acknowledged[] = [];
        const inDoubt: Operation[] = [];
        const unexpected: string[] = [];
        const killAt = 1 + Math.floor(random() * MAX_KILL_AT_ACK);
        let killed = false;
        await Promise.all(
          decided.map(async (op) => {
            let answer: HttpAnswer;
            try {
              answer = await client.request("POST", op.path, op.body);
            } catch (e) {
              if (killed) inDoubt.push(op);
              else unexpected.push(`${op.kind} of ${op.executionId}: ${(e as Error).message} before the kill`);
              return;
            }
            const signature = answeredSignature(op.kind, answer);
            if (signature === undefined) {
              unexpected.push(`${op.kind} of ${op.executionId}: ${show(answer)}`);
              return;
            }
            acks.push({ ...op, signature });
            if (acks.length === killAt && !killed) {
              // Synchronously, in the callback that read the answer: the others are still in flight.
              killed = true;
              sidecar.child.kill("SIGKILL");
            }
          }),
        );
        killed = true;
        const exit = await sidecar.kill();
        client.close();
        const log = `\n--- sidecar output ---\n${sidecar.output().slice(-4_000)}`;
        expect(
          unexpected.slice(0, 20),
          `${where(cycle)}: ${unexpected.length} unexpected answers (${acks.length} acknowledged)${log}`,
        ).toEqual([]);
        expect(exit.signal, `${where(cycle)}: the sidecar must die by our SIGKILL${log}`).toBe("SIGKILL");
        previous = { acks, inDoubt };
        totals.acks += acks.length;
        totals.inDoubt += inDoubt.length;
      } finally {
        await sidecar.kill();
      }
      await sleep(10);
    }

    const sidecar = await start(CYCLES);
    try {
      await verify(sidecar, CYCLES);
    } finally {
      await sidecar.kill();
    }
    console.log(
      `crash: seed ${seed}, ${totals.acks} acknowledged, ${totals.inDoubt} in flight at ${CYCLES} kills (${totals.inDoubtFoundDone} found done after the restart)`,
    );
    // Not vacuous: the kills landed with operations still in flight.
    expect(totals.inDoubt, `${where("final")}: operations in flight at the kills`).toBeGreaterThan(CYCLES * 10);
  }, 240_000);
});
